// The PostgreSQL pool, with deadlines on both sides so that a database that stops answering
// (a hung server, a black-holed network path) turns into a 503 within seconds instead of holding
// requests for as long as the load balancer waits:
// - connecting: CONNECT_TIMEOUT_MS, then the request is 503;
// - a query: the server cancels its own statement a second before the client gives up
//   (statement_timeout), and the client gives up at the deadline (query_timeout) whether or not
//   the server answers; the connection that timed out is destroyed, never reused.
// Two deadline classes: the pool's default for data pages (DB_QUERY_TIMEOUT_MS) and a short one for
// the lookups every request makes first (tokens, units, employees, readiness): `lookup()`.
import pg from 'pg';
import { statementName } from './statements.js';

export const CONNECT_TIMEOUT_MS = 3000;
export const DEFAULT_QUERY_TIMEOUT_MS = 10_000;
/** Lookups by key answer in milliseconds on a live server: past this, the database is in trouble. */
export const LOOKUP_TIMEOUT_MS = 3000;
/** The client's deadline minus this is the server's statement_timeout: a slow server cancels first. */
const SERVER_MARGIN_MS = 1000;

/** pg's own message when query_timeout passes (it has no code). */
export const QUERY_DEADLINE_MESSAGE = 'Query read timeout';

export interface PoolOptions {
  onError?: (error: Error) => void;
  /** the client's deadline of a query (config DB_QUERY_TIMEOUT_MS) */
  queryTimeoutMs?: number;
  /** the service's own statements prepared on each connection (config DB_PREPARED_STATEMENTS) */
  preparedStatements?: boolean;
}

// numeric and bigint stay strings (exact money, ids beyond 2^53); int4 arrays are parsed by pg
export function createPool(
  connectionString: string,
  max: number,
  { onError = () => {}, queryTimeoutMs = DEFAULT_QUERY_TIMEOUT_MS, preparedStatements = true }: PoolOptions = {},
) {
  const pool = new pg.Pool({
    ...(preparedStatements ? { Client: PreparingClient } : {}),
    connectionString,
    max,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    statement_timeout: Math.max(queryTimeoutMs - SERVER_MARGIN_MS, 500),
    query_timeout: queryTimeoutMs,
    // a dead peer is noticed by TCP too, not only by the deadline of a query in flight
    keepAlive: true,
    application_name: 'coldtrack-api',
    // dates in the API are UTC days: date <-> timestamptz conversions must not depend on the server
    // and the API's short queries must not pay for JIT compilation when the planner misjudges a join;
    // floats print as their shortest round-trip digits, as JavaScript's, whatever the server's
    // default (sensor pages written as JSON by PostgreSQL, sql/queries/sensor-data.sql)
    options: '-c TimeZone=UTC -c jit=off -c extra_float_digits=1',
  });
  pool.on('error', onError);
  // pg-pool removes a client released with an error by ending it politely, which on a silent
  // server leaves the socket open (and the stuck query on it) until TCP gives up: destroy it
  pool.on('release', (error: Error | undefined, client: pg.PoolClient) => {
    if (error?.message === QUERY_DEADLINE_MESSAGE) (client as pg.PoolClient & { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  });
  return pool;
}

/**
 * A client that runs the service's registered statements (src/db/statements.ts) as named ones:
 * PostgreSQL parses each once per connection and, once five runs show a generic plan is no
 * costlier, stops planning it. Every other text runs unnamed as before. Through the pool's
 * Client option, so pool.query and clients checked out for transactions behave alike.
 */
class PreparingClient extends pg.Client {
  // pg's query() has many overloads; this only adds a name to the config it is given
  override query(config: unknown, values?: unknown, callback?: unknown): never {
    const run = super.query as unknown as (config: unknown, values?: unknown, callback?: unknown) => never;
    if (typeof config === 'string') {
      const name = statementName(config);
      if (name) return run.call(this, { name, text: config }, values, callback);
    } else if (config !== null && typeof config === 'object' && !('name' in config) && 'text' in config) {
      const name = statementName((config as { text: string }).text);
      if (name) return run.call(this, { ...config, name }, values, callback);
    }
    return run.call(this, config, values, callback);
  }
}

type Queryable = Pick<pg.Pool, 'query'>;

/** A lookup by key under the short deadline (LOOKUP_TIMEOUT_MS). */
export function lookup<Row extends pg.QueryResultRow>(db: Queryable, text: string, values: unknown[]) {
  return db.query<Row>({ text, values, query_timeout: LOOKUP_TIMEOUT_MS } as pg.QueryConfig);
}

/**
 * Runs `work` in one transaction on a client of its own: COMMIT when it returns, ROLLBACK and
 * rethrow when it throws. A client that failed otherwise than by the server's refusal (a deadline
 * passed, the connection broke, something outside the database threw) is discarded, not reused:
 * its connection may be stuck mid-statement.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let failure: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    if (!(error instanceof pg.DatabaseError)) failure = error as Error;
    await client.query('ROLLBACK').catch((rollbackError: Error) => (failure ??= rollbackError));
    throw error;
  } finally {
    client.release(failure);
  }
}
