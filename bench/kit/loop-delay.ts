// Event-loop delay of a cluster's workers over one run (P5).
// - Project: GET /metrics, nodejs_eventloop_lag_p99_seconds and _max_seconds. prom-client resets
//   each worker's histogram whenever it is collected, so a scrape before the run starts the window
//   and a scrape after it reads it. The cluster primary aggregates the workers (prom-client's
//   aggregators: p99 is the AVERAGE of the workers' p99s, max the MAX): per-worker values are not
//   exposed, so the figure is taken as exposed.
// - Reference: GET /__loop on fresh connections until every worker has answered (the cluster
//   hands each new connection to the next worker); per-worker values, averaged the same way.
// - Both read Node's monitorEventLoopDelay sampled every 10 ms (the project through prom-client's
//   eventLoopMonitoringPrecision: 10, src/observability/metrics.ts; the reference directly). Its
//   histogram records the whole interval between two samples, the 10 ms included: an idle process
//   reports p50 10.1 ms and p99 ~13 ms. The delay is what exceeds the interval, so 10 ms is taken
//   off every figure here, both servers alike (what Elastic's APM agent does; see
//   open-telemetry/opentelemetry-js-contrib#2794).
import { request } from './load.js';

/** the sampling interval of both servers' monitors, included in every figure they report */
export const LOOP_SAMPLING_MS = 10;
const delayOf = (reportedMs: number) => Math.max(0, reportedMs - LOOP_SAMPLING_MS);

export interface LoopDelay {
  /** average over the workers of each worker's p99 (what the project's /metrics exposes) */
  p99Ms: number;
  /** highest single delay on any worker */
  maxMs: number;
  /** per worker, when the server exposes it */
  workers: { pid: number; p99Ms: number; maxMs: number }[];
  source: string;
}

export function metric(text: string, name: string): number | null {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)`, 'm').exec(text);
  return match ? Number(match[1]) : null;
}

async function scrape(url: string): Promise<LoopDelay> {
  const answer = await request(`${url}/metrics`, { timeoutMs: 10_000 });
  if (answer.status !== 200) throw new Error(`GET /metrics answered ${answer.status}`);
  const p99 = metric(answer.body, 'nodejs_eventloop_lag_p99_seconds');
  const max = metric(answer.body, 'nodejs_eventloop_lag_max_seconds');
  if (p99 === null || max === null) throw new Error('GET /metrics has no nodejs_eventloop_lag_p99_seconds');
  return {
    p99Ms: delayOf(p99 * 1000),
    maxMs: delayOf(max * 1000),
    workers: [],
    source: `GET /metrics nodejs_eventloop_lag_p99_seconds less its ${LOOP_SAMPLING_MS} ms sampling interval (cluster aggregate: mean of the workers' p99)`,
  };
}

async function everyWorker(url: string, reset: boolean, workers: number): Promise<LoopDelay> {
  const seen = new Map<number, { pid: number; p99Ms: number; maxMs: number }>();
  for (let attempt = 0; attempt < workers * 6 && seen.size < workers; attempt++) {
    const answer = await request(`${url}/__loop${reset ? '?reset=1' : ''}`, { timeoutMs: 10_000 });
    const figures = JSON.parse(answer.body) as { pid: number; p99Ms: number; maxMs: number };
    if (!seen.has(figures.pid)) seen.set(figures.pid, { pid: figures.pid, p99Ms: delayOf(figures.p99Ms), maxMs: delayOf(figures.maxMs) });
  }
  const list = [...seen.values()];
  return {
    p99Ms: list.reduce((sum, w) => sum + w.p99Ms, 0) / Math.max(1, list.length),
    maxMs: Math.max(0, ...list.map((w) => w.maxMs)),
    workers: list,
    source: `GET /__loop of ${list.length} of ${workers} workers (monitorEventLoopDelay less its ${LOOP_SAMPLING_MS} ms sampling interval)`,
  };
}

/** Starts a measuring window on every worker; read() ends it. */
export async function startLoopWindow(server: 'project' | 'reference', url: string, workers: number) {
  if (server === 'project') await scrape(url);
  else await everyWorker(url, true, workers);
  return { read: () => (server === 'project' ? scrape(url) : everyWorker(url, false, workers)) };
}
