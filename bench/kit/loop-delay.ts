// Event-loop delay of a cluster's workers over a window (P5), as a histogram, so windows, workers
// and runs merge before the p99 is read. Both servers take the same sampler (how late a 10 ms timer
// ran). Project: `event_loop_delay_seconds` in GET /metrics (the primary sums the workers' buckets),
// scraped before and after; reference: GET /__loop on fresh connections until every worker answered.
import { request } from './load.js';

/** Monitor interval of prom-client's nodejs_eventloop_lag_* gauges, included in their figures. */
export const LOOP_SAMPLING_MS = 10;
const delayOf = (reportedMs: number) => Math.max(0, reportedMs - LOOP_SAMPLING_MS);

/** Samples per bucket (not cumulative): counts[i] at or under boundsMs[i], the last one over every bound. */
export interface LoopHistogram {
  boundsMs: number[];
  counts: number[];
}

export interface LoopDelay {
  /** p99 of the window's (or the merged windows') histogram, interpolated within its bucket */
  p99Ms: number;
  /** share of the samples later than 20 ms (P5's line, a bucket bound: exact) */
  over20Share: number;
  /** highest single delay on any worker */
  maxMs: number;
  /** the highest p99 of a single window among those merged (the window itself when one) */
  worstWindowP99Ms: number;
  windows: number;
  histogram: LoopHistogram;
  source: string;
}

export function metric(text: string, name: string): number | null {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)`, 'm').exec(text);
  return match ? Number(match[1]) : null;
}

/** Cumulative bucket counts of `event_loop_delay_seconds` in a Prometheus text body, in bound order. */
function cumulativeBuckets(text: string): { boundsMs: number[]; cumulative: number[] } {
  const pairs = [...text.matchAll(/^event_loop_delay_seconds_bucket\{[^}]*le="([^"]+)"[^}]*\} ([0-9.eE+-]+)$/gm)].map((m) => ({
    le: m[1] === '+Inf' ? Infinity : Number(m[1]) * 1000,
    count: Number(m[2]),
  }));
  if (pairs.length === 0) throw new Error('GET /metrics has no event_loop_delay_seconds histogram');
  pairs.sort((a, b) => a.le - b.le);
  return { boundsMs: pairs.filter((p) => p.le !== Infinity).map((p) => p.le), cumulative: pairs.map((p) => p.count) };
}

const perBucket = (cumulative: number[]) => cumulative.map((count, i) => count - (i === 0 ? 0 : cumulative[i - 1]!));

/** The q-quantile of a histogram, linear within its bucket (as Prometheus's histogram_quantile). */
export function quantileMs(histogram: LoopHistogram, q: number): number {
  const total = histogram.counts.reduce((a, b) => a + b, 0);
  if (total === 0) return 0;
  const rank = q * total;
  let below = 0;
  for (const [i, count] of histogram.counts.entries()) {
    if (below + count >= rank && count > 0) {
      // over the highest bound: the bound is all that is known
      if (i >= histogram.boundsMs.length) return histogram.boundsMs.at(-1)!;
      const lower = i === 0 ? 0 : histogram.boundsMs[i - 1]!;
      return lower + (histogram.boundsMs[i]! - lower) * ((rank - below) / count);
    }
    below += count;
  }
  return histogram.boundsMs.at(-1)!;
}

function describe(histogram: LoopHistogram, maxMs: number, worstWindowP99Ms: number | null, windows: number, source: string): LoopDelay {
  const total = histogram.counts.reduce((a, b) => a + b, 0);
  const at20 = histogram.boundsMs.indexOf(20);
  const over20 = at20 === -1 ? 0 : histogram.counts.slice(at20 + 1).reduce((a, b) => a + b, 0);
  const p99Ms = quantileMs(histogram, 0.99);
  return { p99Ms, over20Share: total ? over20 / total : 0, maxMs, worstWindowP99Ms: worstWindowP99Ms ?? p99Ms, windows, histogram, source };
}

/** Windows (or workers, or runs) as one: their histograms added up, p99 read from the sum. */
export function mergeLoops(loops: LoopDelay[]): LoopDelay | null {
  const first = loops[0];
  if (!first) return null;
  const counts = first.histogram.counts.map((_, i) => loops.reduce((sum, loop) => sum + (loop.histogram.counts[i] ?? 0), 0));
  return describe(
    { boundsMs: first.histogram.boundsMs, counts },
    Math.max(...loops.map((loop) => loop.maxMs)),
    Math.max(...loops.map((loop) => loop.worstWindowP99Ms)),
    loops.reduce((sum, loop) => sum + loop.windows, 0),
    first.source,
  );
}

const PROJECT_SOURCE = "GET /metrics event_loop_delay_seconds, the workers' buckets summed";

async function scrapeProject(url: string) {
  const answer = await request(`${url}/metrics`, { timeoutMs: 10_000 });
  if (answer.status !== 200) throw new Error(`GET /metrics answered ${answer.status}`);
  const max = metric(answer.body, 'nodejs_eventloop_lag_max_seconds');
  return { ...cumulativeBuckets(answer.body), maxMs: max === null ? 0 : delayOf(max * 1000) };
}

interface WorkerLoop {
  pid: number;
  maxMs: number;
  buckets: { le: number | '+Inf'; count: number }[];
}

/** Every reference worker's histogram since its last reset, added up; resets them when asked. */
async function everyWorker(url: string, reset: boolean, workers: number): Promise<LoopDelay> {
  const seen = new Map<number, WorkerLoop>();
  for (let attempt = 0; attempt < workers * 6 && seen.size < workers; attempt++) {
    const answer = await request(`${url}/__loop${reset ? '?reset=1' : ''}`, { timeoutMs: 10_000 });
    const figures = JSON.parse(answer.body) as WorkerLoop;
    if (!seen.has(figures.pid)) seen.set(figures.pid, figures);
  }
  const list = [...seen.values()];
  const loops = list.map((worker) => {
    const sorted = [...worker.buckets].sort((a, b) => (a.le === '+Inf' ? 1 : b.le === '+Inf' ? -1 : a.le - b.le));
    const histogram = {
      boundsMs: sorted.filter((b) => b.le !== '+Inf').map((b) => Number(b.le) * 1000),
      counts: perBucket(sorted.map((b) => b.count)),
    };
    return describe(histogram, delayOf(worker.maxMs), null, 1, `GET /__loop of ${list.length} of ${workers} workers, their buckets summed`);
  });
  const merged = mergeLoops(loops);
  if (!merged) throw new Error('GET /__loop: no worker answered');
  return { ...merged, windows: 1, worstWindowP99Ms: merged.p99Ms };
}

/** Starts a measuring window on every worker; read() ends it. */
export async function startLoopWindow(server: 'project' | 'reference', url: string, workers: number) {
  if (server === 'reference') {
    await everyWorker(url, true, workers);
    return { read: () => everyWorker(url, false, workers) };
  }
  const before = await scrapeProject(url);
  return {
    read: async (): Promise<LoopDelay> => {
      const after = await scrapeProject(url);
      const counts = perBucket(after.cumulative.map((count, i) => count - (before.cumulative[i] ?? 0)));
      return describe({ boundsMs: after.boundsMs, counts }, after.maxMs, null, 1, PROJECT_SOURCE);
    },
  };
}
