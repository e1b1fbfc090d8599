// Piscina task file: a heavy revenue, impact or users page done entirely off the event loop. The thread
// runs the page's queries on its own small pg pool, rolls the rows up (workers/rollups/) and
// hands the records back as UTF-8 bytes moved (not copied) to the main thread. So the event loop
// never decodes, clones or collects the megabytes of row text and records a heavy page makes:
// there they cost GC pauses of 10-30 ms (bench P5) and most of a worker's memory (P8).
// A default export on purpose: every thread preloads the file's default handler when it starts.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { threadId } from 'node:worker_threads';
import type pg from 'pg';
import { Piscina } from 'piscina';
import { createPool, type PoolSettings } from '../src/db/pool.js';
import { compileSerializers, rollUpFrom, type RollupRequest, type RowsQuery } from './rollups/index.js';

/** workerData of the pool: the connection settings of the primary and the read replica, as plain data. */
export interface ThreadData {
  databases: { primary: PoolSettings; replica: PoolSettings | null };
}

/** A page, and where to read it (src/db/read-routing.ts decides, in the main thread). */
export interface ThreadTask {
  request: RollupRequest;
  onReplica: boolean;
  /** W3C traceparent of the page's span when the request is traced: the thread then times its work */
  traceparent?: string;
}

/**
 * A span of the thread's work, timed here (epoch milliseconds) and recorded by the main thread
 * under the task's traceparent (src/tracing/thread-spans.ts): the first is the thread's whole
 * task, the others its parts (each query, then the rollup itself). A thread loads no
 * OpenTelemetry: docs/tracing.md says why.
 */
export interface ThreadSpan {
  name: string;
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number>;
}

/** The records' JSON as bytes (with the thread's spans when traced), or why the page failed (an Error crossing threads loses its code). */
export type ThreadAnswer =
  Uint8Array | { records: Uint8Array; traceparent: string; spans: ThreadSpan[] } | { failure: { message: string; code?: string } };

/**
 * A thread works on one page at a time (src/analytics/rollups.ts TASKS_PER_THREAD), and an impact
 * page runs its three queries at once.
 */
const THREAD_POOL_MAX = 3;

/**
 * Rollups are batch work and the event loop is not: on Linux a rollup thread lowers its own
 * scheduling priority (nice 10, what Piscina's niceIncrement does through a native module), so
 * when they compete for a core the event loop wins.
 */
const ROLLUP_THREAD_NICE = 10;
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), ROLLUP_THREAD_NICE);
} catch {
  // not Linux, or not allowed: the threads keep the default priority
}

// a thread exists to roll up pages: its serialisers are ready before its first one
compileSerializers();

const pools = new Map<'primary' | 'replica', pg.Pool>();

function poolOf(target: 'primary' | 'replica'): pg.Pool {
  let pool = pools.get(target);
  if (!pool) {
    const { databases } = Piscina.workerData as ThreadData;
    const { connectionString, queryTimeoutMs, pooler } = (target === 'replica' ? databases.replica : null) ?? databases.primary;
    // unprepared: a thread's few heavy statements are planned per page anyway; an idle client
    // cut by the server is dropped, and the next query reconnects
    pool = createPool(connectionString, THREAD_POOL_MAX, { queryTimeoutMs, pooler, preparedStatements: false });
    pools.set(target, pool);
  }
  return pool;
}

const epochMs = () => performance.timeOrigin + performance.now();

/** The bytes moved (not copied) to the main thread inside an object: Piscina transfers what kTransferable names. */
function moveWithSpans(records: Uint8Array, traceparent: string, spans: ThreadSpan[]) {
  const value = { records, traceparent, spans };
  const transferable = { [Piscina.transferableSymbol]: records.buffer, [Piscina.valueSymbol]: value };
  return Piscina.move(transferable as unknown as Parameters<typeof Piscina.move>[0]) as unknown as ThreadAnswer;
}

export default async function runOnThread({ request, onReplica, traceparent }: ThreadTask): Promise<ThreadAnswer> {
  const pool = poolOf(onReplica ? 'replica' : 'primary');
  const startMs = traceparent ? epochMs() : 0;
  const spans: ThreadSpan[] = [];
  const textsOf = async (query: RowsQuery) => {
    const queryStart = traceparent ? epochMs() : 0;
    const texts = (await pool.query<{ rows: string }>(query.text, query.values)).rows.map((row) => row.rows);
    if (traceparent) {
      const name = query.label ?? 'SQL';
      spans.push({ name, startMs: queryStart, endMs: epochMs(), attributes: { 'db.system.name': 'postgresql', 'db.query.summary': name } });
    }
    return texts;
  };
  try {
    const records = await rollUpFrom(request, textsOf);
    const bytes = typeof records === 'string' ? new TextEncoder().encode(records) : records;
    if (!traceparent) return Piscina.move(bytes) as Uint8Array;
    const endMs = epochMs();
    const lastAnswer = spans.reduce((latest, span) => Math.max(latest, span.endMs), startMs);
    const attributes = { 'thread.id': threadId, 'coldtrack.rollup.kind': request.kind };
    spans.unshift({ name: `rollup ${request.kind} on thread`, startMs, endMs, attributes });
    spans.push({
      name: `rollup ${request.kind} compute`,
      startMs: lastAnswer,
      endMs,
      attributes: { 'coldtrack.rollup.bytes': bytes.byteLength },
    });
    return moveWithSpans(bytes, traceparent, spans);
  } catch (error) {
    const { message, code } = error as { message?: unknown; code?: unknown };
    return { failure: { message: String(message), ...(typeof code === 'string' ? { code } : {}) } };
  }
}
