// Event-loop delay of a cluster's workers over one run (P5).
// - Project: GET /metrics, nodejs_eventloop_lag_p99_seconds and _max_seconds. prom-client resets
//   each worker's histogram whenever it is collected, so a scrape before the run starts the window
//   and a scrape after it reads it. The cluster primary aggregates the workers (prom-client's
//   aggregators: p99 is the AVERAGE of the workers' p99s, max the MAX): per-worker values are not
//   exposed, so the figure is taken as exposed.
// - Reference: GET /__loop on fresh connections until every worker has answered (the cluster
//   hands each new connection to the next worker); per-worker values, averaged the same way.
import { request } from './processes.js';

export interface LoopDelay {
  /** average over the workers of each worker's p99 (what the project's /metrics exposes) */
  p99Ms: number;
  /** highest single delay on any worker */
  maxMs: number;
  /** per worker, when the server exposes it */
  workers: { pid: number; p99Ms: number; maxMs: number }[];
  source: string;
}

function metric(text: string, name: string): number | null {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)`, 'm').exec(text);
  return match ? Number(match[1]) : null;
}

async function scrape(url: string): Promise<LoopDelay> {
  const answer = await request(`${url}/metrics`, { timeoutMs: 10_000 });
  if (answer.status !== 200) throw new Error(`GET /metrics answered ${answer.status}`);
  const p99 = metric(answer.body, 'nodejs_eventloop_lag_p99_seconds');
  const max = metric(answer.body, 'nodejs_eventloop_lag_max_seconds');
  if (p99 === null || max === null) throw new Error('GET /metrics has no nodejs_eventloop_lag_p99_seconds');
  return { p99Ms: p99 * 1000, maxMs: max * 1000, workers: [], source: 'GET /metrics nodejs_eventloop_lag_p99_seconds (cluster aggregate: mean of the workers\' p99)' };
}

async function everyWorker(url: string, reset: boolean, workers: number): Promise<LoopDelay> {
  const seen = new Map<number, { pid: number; p99Ms: number; maxMs: number }>();
  for (let attempt = 0; attempt < workers * 6 && seen.size < workers; attempt++) {
    const answer = await request(`${url}/__loop${reset ? '?reset=1' : ''}`, { timeoutMs: 10_000 });
    const figures = JSON.parse(answer.body) as { pid: number; p99Ms: number; maxMs: number };
    if (!seen.has(figures.pid)) seen.set(figures.pid, figures);
  }
  const list = [...seen.values()];
  return {
    p99Ms: list.reduce((sum, w) => sum + w.p99Ms, 0) / Math.max(1, list.length),
    maxMs: Math.max(0, ...list.map((w) => w.maxMs)),
    workers: list,
    source: `GET /__loop of ${list.length} of ${workers} workers (monitorEventLoopDelay, 10 ms resolution)`,
  };
}

/** Starts a measuring window on every worker; read() ends it. */
export async function startLoopWindow(server: 'project' | 'reference', url: string, workers: number) {
  if (server === 'project') await scrape(url);
  else await everyWorker(url, true, workers);
  return { read: () => (server === 'project' ? scrape(url) : everyWorker(url, false, workers)) };
}
