// Bulk sensor history (GET /api/v1/sensor-data/bulk): a window of many units' history as one
// stream, written by PostgreSQL itself (COPY ... TO STDOUT as CSV or NDJSON lines) and compressed
// on libuv's thread pool, or as binary tuples a Parquet thread encodes (src/sensors/bulk-parquet.ts),
// so the event loop only hands buffers on. A window is cut into slices of
// whole days holding about `maxRecords` records each (the daily aggregate's counts say where):
// each response is one slice, read in one statement and so one snapshot, and names the next slice
// in its Link header. A dropped connection costs one slice: the client asks for it again.
import { PassThrough, pipeline, type Readable } from 'node:stream';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { loadQueries } from '../db/sql.js';
import { type Aggregation, type CountedScope, readDayCounts } from './day-counts.js';

const sql = loadQueries('sensor-bulk', ['rawRows', 'hourlyRows', 'dailyRows', 'csvColumns', 'ndjsonLine', 'binaryColumns'], {
  prepared: false,
});
// the change feed's head, as the pages read it (sql/queries/sensor-changes.sql)
const { feedVersion } = loadQueries('sensor-changes', ['feedVersion']);
const ROWS: Record<Aggregation, string> = { raw: sql.rawRows, hourly: sql.hourlyRows, daily: sql.dailyRows };

export const BULK_FORMATS = ['csv', 'ndjson', 'parquet'] as const;
export type BulkFormat = (typeof BULK_FORMATS)[number];
export const CONTENT_TYPES: Record<BulkFormat, string> = {
  csv: 'text/csv; charset=utf-8; header=present',
  ndjson: 'application/x-ndjson',
  // IANA's type for Parquet (2024)
  parquet: 'application/vnd.apache.parquet',
};
export const CSV_HEADER = 'timestamp,cooling_unit_id,specification_type,value,sample_count,min,max';

export interface BulkQuery extends CountedScope {
  aggregation: Aggregation;
  format: BulkFormat;
}

/**
 * The first slice of [fromMs, toMs): whole days, as many as hold at most maxRecords records (the
 * first day with records always, however many it holds), and how many records they held when counted.
 */
export async function planSlice(pool: Pick<pg.Pool, 'query'>, query: BulkQuery, maxRecords: number) {
  const counts = await readDayCounts(pool, query);
  const before = counts.before[query.aggregation];
  // days[k] is the first day that does not fit, when one does not
  const k = counts.days.findIndex((_, index) => index > 0 && before[index + 1]! > maxRecords);
  if (k === -1) return { fromMs: query.fromMs, toMs: query.toMs, estimatedRecords: before[counts.days.length]! };
  return { fromMs: query.fromMs, toMs: counts.days[k]!, estimatedRecords: before[k]! };
}

/** `$n` of a bulk query written in as literals: COPY takes no parameters. Only values this module formats. */
function withLiterals(text: string, query: BulkQuery): string {
  const literals = [
    `'{${query.unitIds.map((id) => String(Math.trunc(id))).join(',')}}'`,
    `'{${query.types.join(',')}}'`,
    `'${new Date(query.fromMs).toISOString()}'`,
    `'${new Date(query.toMs).toISOString()}'`,
  ];
  return text.replace(/\$([1-4])\b/g, (_, n: string) => literals[Number(n) - 1]!);
}

/** The COPY statement of a slice: CSV, NDJSON lines, or binary tuples for the Parquet thread. */
export function copyStatement(query: BulkQuery): string {
  const rows = `WITH rows AS (${withLiterals(ROWS[query.aggregation], query)})`;
  switch (query.format) {
    case 'csv':
      return `COPY (${rows} ${sql.csvColumns}) TO STDOUT WITH (FORMAT csv, HEADER true)`;
    case 'ndjson':
      return `COPY (${rows} ${sql.ndjsonLine}) TO STDOUT`;
    case 'parquet':
      return `COPY (${rows} ${sql.binaryColumns}) TO STDOUT WITH (FORMAT binary)`;
  }
}

export interface SliceStream {
  /** the slice's bytes, uncompressed */
  body: Readable;
  /** resolves once the statement finished and the connection went back (or was closed) */
  done: Promise<void>;
}

/**
 * Streams a slice from a connection of `pool`: a transaction whose statement may run for up to
 * `statementTimeoutMs` (the pool's deadline is for pages, not pulls), one COPY, commit. A
 * consumer that goes away destroys the stream: the connection is then closed, which ends the
 * statement on the server. With `minHead` (a replica's pool), the slice is read only if its
 * snapshot holds the change feed up to there (repeatable read: the head is read in the COPY's
 * snapshot); null when it does not, and nothing was streamed.
 */
export async function streamSlice(pool: pg.Pool, query: BulkQuery, statementTimeoutMs: number): Promise<SliceStream>;
export async function streamSlice(
  pool: pg.Pool,
  query: BulkQuery,
  statementTimeoutMs: number,
  minHead: bigint | null,
): Promise<SliceStream | null>;
export async function streamSlice(
  pool: pg.Pool,
  query: BulkQuery,
  statementTimeoutMs: number,
  minHead: bigint | null = null,
): Promise<SliceStream | null> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    await client.query(`SET LOCAL statement_timeout = ${Math.trunc(statementTimeoutMs)}`);
    if (minHead !== null) {
      const { rows } = await client.query<{ head: string }>(feedVersion);
      if (BigInt(rows[0]!.head) < minHead) {
        await client.query('ROLLBACK');
        client.release();
        return null;
      }
    }
  } catch (error) {
    client.release(error as Error);
    throw error;
  }
  const copy = copyTo(copyStatement(query));
  // no client-side deadline (src/db/deadline-client.ts gives a submittable the pool's, a page's):
  // pg's timer for one is never cleared, as a COPY stream calls no callback, and it would cut a
  // pull short; statement_timeout above bounds the statement on the server
  (copy as unknown as { query_timeout: number }).query_timeout = 0;
  const source = client.query(copy);
  const body = new PassThrough({ highWaterMark: 256 * 1024 });
  // a connection the server ends mid-COPY (terminated, restarted) is also an 'error' of the client,
  // which the pool listens for only while the client is idle: unheard, it would end the process
  const lost = (error: Error) => body.destroy(error);
  client.on('error', lost);
  const done = new Promise<void>((resolve) => {
    pipeline(source, body, (error) => {
      if (error) {
        // cut off (or failed): the connection is closed, never reused mid-COPY
        client.release(error);
        resolve();
        return;
      }
      client.query('COMMIT').then(
        () => {
          client.off('error', lost);
          client.release();
          resolve();
        },
        (commitError: Error) => {
          client.release(commitError);
          resolve();
        },
      );
    });
  });
  return { body, done };
}
