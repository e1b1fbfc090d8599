// The revenue, impact and users rollups as a service. A heavy page goes whole to a Piscina thread
// (workers/rollup-thread.ts): the thread queries the rows, rolls them up and moves the records'
// bytes back, so the event loop never handles the megabytes in between. A small page runs
// inline: its queries on the main pool, the very same rollup functions (workers/rollups/) on
// the main thread, because a thread hop costs more than the rollup and a page_size=10 request
// must not queue behind 1000-record ones. `inline` mode runs everything on the main thread (for
// comparison in bench/event-loop.ts).
import type { FastifyReply } from 'fastify';
import type pg from 'pg';
import { Piscina } from 'piscina';
import type { ThreadAnswer, ThreadData, ThreadTask } from '../../workers/rollup-thread.js';
import {
  type Cell,
  type ImpactRecord,
  type Json,
  type RevenueRecord,
  type RollupRequest,
  rollUpFrom,
  type RowsQuery,
  type UsersInput,
} from '../../workers/rollups/index.js';
import type { GridPage } from './query.js';
import { poolSettings, type PoolSettings } from '../db/pool.js';
import { queryLabel } from '../db/query-tracing.js';
import { createReadRouting, type ReadRouting } from '../db/read-routing.js';
import { threadHop } from '../tracing/spans.js';
import { formatDay } from '../data-surface/window.js';
import { DAY_MS } from '../time.js';
import { threadFileFor } from '../thread-file.js';

export type { Cell, ImpactRecord, Json, RevenueRecord, RollupRequest, RowsQuery, UsersInput };

export type RollupMode = 'pool' | 'inline';

/** The records as JSON: text from an inline rollup, UTF-8 bytes from a thread. */
export type RollupBody = string | Uint8Array;

export interface Rollups {
  readonly mode: RollupMode;
  /** `unitDays`: the page's units x days, which decides inline or thread */
  rollUp(request: RollupRequest, unitDays: number): Promise<RollupBody>;
  /** Tasks waiting for a worker thread (a /metrics gauge); always 0 inline. */
  queueSize(): number;
  /** Starts the worker threads (and their connections) now instead of on the first task. */
  warm(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Pages of fewer unit-days than this run inline: about 2,000 check-out rows (~130 KB of row
 * text), which roll up in well under a millisecond.
 */
export const INLINE_BELOW_UNIT_DAYS = 300;

/**
 * Pages a thread works on at once (see workers/rollup-thread.ts THREAD_POOL_MAX). One: a heavy
 * page is CPU work end to end (PostgreSQL's, then the thread's), so the pages in flight are
 * bounded by the rollup threads (CPU count - 1 across the cluster) and the rest wait in Piscina's
 * queue. At 3 a thread, bench/ P5 measured 24.9 ms event-loop delay p99 (heavy pages 13.9-15.5/s,
 * p99 898-910 ms) against 18.8 ms (15.4-16.9/s, p99 554-747 ms) at 1: the extra pages did not add
 * throughput, they queued in the kernel's run queue, in front of the event loops.
 */
const TASKS_PER_THREAD = 1;

export interface RollupOptions {
  mode: RollupMode;
  threads: number;
  /** the main pool: inline queries, and the settings the threads' own pools copy (unless `reads`) */
  db: pg.Pool;
  /** the data reads' routing (replica, or primary while it is lost): inline queries and threads follow it */
  reads?: Pick<ReadRouting, 'run' | 'settings'> | undefined;
  /** pool mode: pages of fewer unit-days run inline (0: everything on the pool) */
  inlineBelowUnitDays?: number;
  /** each thread's V8 old-space limit in MB (config.heapLimitMb; why: config.ts heapFlags) */
  heapLimitMb?: number;
}

/**
 * The task file next to this module's build: workers/rollup-thread.ts when running from source
 * under tsx (worker threads inherit `--import tsx` through execArgv, and its hooks load TypeScript
 * there too), workers/rollup-thread.js from dist/ (plain ESM, imported natively).
 */
export const rollupWorkerFile = (moduleUrl: string = import.meta.url): URL => threadFileFor(moduleUrl, 'rollup-thread');

/** The main pool's settings a thread can receive, as plain data: its threads' pools connect alike. */
export const threadDatabaseSettings = (db: pg.Pool): PoolSettings => poolSettings(db);

export function createRollups(options: RollupOptions): Rollups {
  const inlineBelow = options.mode === 'inline' ? Infinity : (options.inlineBelowUnitDays ?? INLINE_BELOW_UNIT_DAYS);
  const reads = options.reads ?? createReadRouting(options.db, null);
  const inlineTexts = (query: RowsQuery) =>
    reads.run(async (target) => (await target.pool.query<{ rows: string }>(query.text, query.values)).rows.map((row) => row.rows));
  // created on first use: an app that never serves a heavy page (most tests) starts no threads
  let pool: Piscina<ThreadTask, ThreadAnswer> | null = null;
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
      concurrentTasksPerWorker: TASKS_PER_THREAD,
      workerData: { databases: reads.settings() } satisfies ThreadData,
      // the cluster workers' heap policy (config.ts heapFlags), per thread: a thread is its own heap
      ...(options.heapLimitMb ? { resourceLimits: { maxOldGenerationSizeMb: options.heapLimitMb, maxYoungGenerationSizeMb: 24 } } : {}),
    });
    return pool;
  };
  // the thread runs the page on the pool the routing picks; a replica it cannot reach fails the
  // task with the error's code, and the routing runs it again on the primary
  const onThread = (request: RollupRequest): Promise<Uint8Array> =>
    reads.run((target) => onThreadWith({ request, onReplica: target.onReplica }));
  const onThreadWith = async (task: ThreadTask): Promise<Uint8Array> => {
    // a traced page: the thread gets the hop's traceparent and the queries' names, and reports its spans back
    const hop = threadHop(`rollup ${task.request.kind}`, {
      'coldtrack.rollup.kind': task.request.kind,
      'coldtrack.rollup.replica': task.onReplica,
    });
    const pending = workers().run(hop ? { ...task, request: labelled(task.request), traceparent: hop.traceparent } : task);
    onPool.add(pending);
    void pending.finally(() => onPool.delete(pending)).catch(() => {});
    let answer: ThreadAnswer;
    try {
      answer = await pending;
    } catch (error) {
      hop?.end(undefined, error);
      throw error;
    }
    if (answer instanceof Uint8Array) {
      hop?.end(undefined);
      return answer;
    }
    if ('records' in answer) {
      if (hop) hop.end(answer.traceparent === hop.traceparent ? answer.spans : undefined);
      return answer.records;
    }
    // the thread's database error, with the code the error handler maps (503 when the database is down)
    const failure = Object.assign(new Error(answer.failure.message), answer.failure.code ? { code: answer.failure.code } : {});
    hop?.end(undefined, failure);
    throw failure;
  };

  return {
    mode: options.mode,
    rollUp: (request, unitDays) => (closing || unitDays < inlineBelow ? rollUpFrom(request, inlineTexts) : onThread(request)),
    queueSize: () => pool?.queueSize ?? 0,
    async warm() {
      if (options.mode === 'inline') return;
      const nothing: RollupRequest = { kind: 'revenue', cells: [], checkOuts: { text: "SELECT '[]' AS rows", values: [] } };
      // a failure (the database not up yet) is the first real request's to report
      await Promise.all(Array.from({ length: options.threads }, () => onThread(nothing).catch(() => {})));
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

/** The request with each query's name from sql/queries/ (its span's name on the thread). */
function labelled(request: RollupRequest): RollupRequest {
  const isQuery = (value: unknown): value is RowsQuery => typeof (value as RowsQuery | null)?.text === 'string';
  const entries = Object.entries(request).map(([key, value]) => [
    key,
    isQuery(value) ? { ...value, label: queryLabel(value.text) } : value,
  ]);
  return Object.fromEntries(entries) as RollupRequest;
}

/**
 * Sends the envelope with the records as the rollup wrote them: JSON text spliced in as it is, so
 * the event loop neither rebuilds 1000 records from the worker's message nor serializes them again
 * (together about 5 ms a heavy page). The route's zod schema still documents the body, and each
 * route checks at compile time that the rollup's record type is assignable to its schema's
 * (RecordMatches); the run-time zod pass of the default serializer is what is skipped.
 */
export function sendEnvelope(reply: FastifyReply, data: RollupBody, meta: object) {
  reply.type('application/json; charset=utf-8');
  const tail = `,"meta":${JSON.stringify(meta)}}`;
  if (typeof data === 'string') return reply.send(`{"data":${data}${tail}`);
  // bytes from a thread: joined outside the JS heap, sent without ever becoming a string
  return reply.send(Buffer.concat([ENVELOPE_HEAD, data, Buffer.from(tail)]));
}

const ENVELOPE_HEAD = Buffer.from('{"data":');

/** Compiles only when the rollup's record type is assignable to the route schema's record type. */
export type RecordMatches<Rollup extends Schema, Schema> = Rollup;

/** The page's cells as the rollups take them: in record order, with their dates. */
export function pageCells(grid: GridPage): Cell[] {
  const dates = new Map(
    grid.buckets.map((bucket) => [bucket, { period_start: formatDay(bucket.start), period_end: formatDay(bucket.end) }]),
  );
  return grid.cells.map(({ bucket, unitId }) => ({ cooling_unit_id: unitId, ...dates.get(bucket)! }));
}

/** The page's cells as parallel SQL parameters, in record order: unit, bucket first and last day. */
export function pageCellColumns(grid: GridPage): { unitIds: number[]; periodStarts: string[]; periodEnds: string[] } {
  const unitIds: number[] = [];
  const periodStarts: string[] = [];
  const periodEnds: string[] = [];
  for (const { bucket, unitId } of grid.cells) {
    unitIds.push(unitId);
    periodStarts.push(formatDay(bucket.start));
    periodEnds.push(formatDay(bucket.end));
  }
  return { unitIds, periodStarts, periodEnds };
}

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
