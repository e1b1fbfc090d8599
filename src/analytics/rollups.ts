// The revenue and impact rollups as a service: on a Piscina pool of worker threads (so a heavy
// page's arithmetic never stalls the event loop) or inline on the main thread (for comparison in
// bench/event-loop.ts). Both modes run the very same function from workers/rollups.ts, and both
// answer the records as JSON text, which the routes send as it is (see sendEnvelope).
import type { FastifyReply } from 'fastify';
import { Piscina } from 'piscina';
import runRollup, {
  type Cell,
  type ImpactInput,
  type ImpactRecord,
  type Json,
  type RevenueInput,
  type RevenueRecord,
  type RollupTask,
} from '../../workers/rollups.js';
import type { GridPage } from './query.js';
import { formatDay } from './window.js';

export type { Cell, ImpactInput, ImpactRecord, Json, RevenueInput, RevenueRecord };

export type RollupMode = 'pool' | 'inline';

export interface Rollups {
  readonly mode: RollupMode;
  revenue(input: RevenueInput): Promise<Json<RevenueRecord[]>>;
  impact(input: ImpactInput): Promise<Json<ImpactRecord[]>>;
  /** Tasks waiting for a worker thread (a /metrics gauge); always 0 inline. */
  queueSize(): number;
  /** Starts the worker threads now instead of on the first task (a listening server calls it). */
  warm(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Below this much row text a rollup takes well under a millisecond: it runs inline rather than
 * queue behind heavy pages on the pool (a page_size=10 request must not wait for a 1000-record one).
 */
export const INLINE_BELOW_BYTES = 128 * 1024;

export interface RollupOptions {
  mode: RollupMode;
  threads: number;
  /** pool mode: inputs with less row text than this run inline (0: everything on the pool) */
  inlineBelowBytes?: number;
  /** each thread's V8 old-space limit in MB (config.heapLimitMb; why: config.ts heapFlags) */
  heapLimitMb?: number;
}

/**
 * The task file next to this module's build: workers/rollups.ts when running from source under
 * tsx (worker threads inherit `--import tsx` through execArgv; on Node 20 only tsx's require hook
 * works inside a worker, which is enough for the task file), workers/rollups.js from dist/ (plain
 * ESM, imported natively).
 */
export function rollupWorkerFile(moduleUrl: string = import.meta.url): URL {
  const extension = new URL(moduleUrl).pathname.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`../../workers/rollups.${extension}`, moduleUrl);
}

const rowBytes = (task: RollupTask) =>
  task.kind === 'revenue' ? task.input.checkOuts.length : task.input.crates.length + task.input.surveys.length + task.input.farmers.length;

export function createRollups(options: RollupOptions): Rollups {
  const inlineBelow = options.mode === 'inline' ? Infinity : (options.inlineBelowBytes ?? INLINE_BELOW_BYTES);
  // created on first use: an app that never serves a heavy page (most tests) starts no threads
  let pool: Piscina<RollupTask, Json<RevenueRecord[] | ImpactRecord[]>> | null = null;
  // once closing, tasks run inline: a request still in flight at shutdown completes instead of
  // failing on a pool that is being torn down
  let closing = false;
  // Piscina's close() waits for running tasks but drops queued ones: close waits for all of these
  const onPool = new Set<Promise<unknown>>();
  const workers = () => {
    pool ??= new Piscina({
      filename: rollupWorkerFile().href,
      minThreads: options.threads,
      maxThreads: options.threads,
      idleTimeout: 60_000,
      // the cluster workers' heap policy (config.ts heapFlags), per thread: a thread is its own heap
      ...(options.heapLimitMb ? { resourceLimits: { maxOldGenerationSizeMb: options.heapLimitMb, maxYoungGenerationSizeMb: 24 } } : {}),
    });
    return pool;
  };
  const run = async (task: RollupTask) => {
    if (closing || rowBytes(task) < inlineBelow) return runRollup(task);
    const pending = workers().run(task);
    onPool.add(pending);
    void pending.finally(() => onPool.delete(pending)).catch(() => {});
    return pending;
  };

  return {
    mode: options.mode,
    revenue: async (input) => (await run({ kind: 'revenue', input })) as Json<RevenueRecord[]>,
    impact: async (input) => (await run({ kind: 'impact', input })) as Json<ImpactRecord[]>,
    queueSize: () => pool?.queueSize ?? 0,
    async warm() {
      if (options.mode === 'inline') return;
      const empty: RollupTask = { kind: 'revenue', input: { cells: [], checkOuts: '[]' } };
      await Promise.all(Array.from({ length: options.threads }, () => workers().run(empty)));
    },
    async close() {
      closing = true;
      // graceful: tasks already on the pool (running or queued) finish first
      await Promise.allSettled(onPool);
      await pool?.destroy();
      pool = null;
    },
  };
}

/**
 * Sends the envelope with the records as the rollup wrote them: JSON text spliced in as it is, so
 * the event loop neither rebuilds 1000 records from the worker's message nor serializes them again
 * (together about 5 ms a heavy page). The route's zod schema still documents the body, and each
 * route checks at compile time that the rollup's record type is assignable to its schema's
 * (RecordMatches); the run-time zod pass of the default serializer is what is skipped.
 */
export function sendEnvelope<Record>(reply: FastifyReply, data: Json<Record[]>, meta: object) {
  return reply.type('application/json; charset=utf-8').send(`{"data":${data},"meta":${JSON.stringify(meta)}}`);
}

/** Compiles only when the rollup's record type is assignable to the route schema's record type. */
export type RecordMatches<Rollup extends Schema, Schema> = Rollup;

/** The page's cells as the rollups take them: in record order, with their dates. */
export function pageCells(grid: GridPage): Cell[] {
  const dates = new Map(grid.buckets.map((bucket) => [bucket, { period_start: formatDay(bucket.start), period_end: formatDay(bucket.end) }]));
  return grid.cells.map(({ bucket, unitId }) => ({ cooling_unit_id: unitId, ...dates.get(bucket)! }));
}

const DAY_MS = 86_400_000;

/**
 * The page's days, each with its bucket: SQL parameters for finding a row's bucket by an equality
 * join on its UTC day (parallel arrays, days ascending).
 */
export function pageDays(grid: GridPage): { days: string[]; periodStarts: string[]; periodEnds: string[] } {
  const days: string[] = [];
  const periodStarts: string[] = [];
  const periodEnds: string[] = [];
  for (const bucket of grid.buckets) {
    const start = formatDay(bucket.start);
    const end = formatDay(bucket.end);
    for (let day = bucket.start; day <= bucket.end; day += DAY_MS) {
      days.push(formatDay(day));
      periodStarts.push(start);
      periodEnds.push(end);
    }
  }
  return { days, periodStarts, periodEnds };
}
