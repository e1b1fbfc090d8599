// The PostgreSQL pool, with deadlines on both sides so that a database that stops answering
// (a hung server, a black-holed network path) turns into a 503 within seconds instead of holding
// requests for as long as the load balancer waits:
// - connecting: CONNECT_TIMEOUT_MS, then the request is 503;
// - a query: the server cancels its own statement a second before the client gives up
//   (statement_timeout), and the client gives up at the deadline (query_timeout) whether or not
//   the server answers; the connection that timed out gets a cancel request for its statement
//   (the server stops working, or waiting on a lock, for a request that already failed) and is
//   then destroyed, never reused.
// Two deadline classes: the pool's default for data pages (DB_QUERY_TIMEOUT_MS) and a short one for
// the lookups every request makes first (tokens, units, employees, readiness): `lookup()`.
//
// DB_POOLER says what sits between the service and PostgreSQL. `none`: a connection is a session,
// and carries its settings as start-up parameters. `transaction` (PgBouncer in transaction mode):
// consecutive transactions of one connection may run on different server connections, and the
// pooler refuses start-up parameters it does not know, so nothing but the user, database and
// application name is sent; TimeZone is SET once per connection (PgBouncer tracks it and restores
// it on every server connection it lends), and each transaction the service opens sets the rest
// for itself (SET LOCAL, in the BEGIN's round trip). A single statement outside a transaction
// then runs under the database's own jit and statement_timeout: the cancel request above is what
// holds its deadline on the server (docs/operations.md, "PgBouncer").
import pg from 'pg';
import { DeadlineClient, QUERY_DEADLINE_MESSAGE } from './deadline-client.js';
import { traceQueries } from './query-tracing.js';
import { statementName } from './statements.js';

export const CONNECT_TIMEOUT_MS = 3000;
export const DEFAULT_QUERY_TIMEOUT_MS = 10_000;
/** Lookups by key answer in milliseconds on a live server: past this, the database is in trouble. */
export const LOOKUP_TIMEOUT_MS = 3000;
/** The client's deadline minus this is the server's statement_timeout: a slow server cancels first. */
const SERVER_MARGIN_MS = 1000;
export { QUERY_DEADLINE_MESSAGE } from './deadline-client.js';

/** What sits between the service and PostgreSQL (config DB_POOLER). */
export type DbPooler = 'none' | 'transaction';

export interface PoolOptions {
  onError?: (error: Error) => void;
  /** the client's deadline of a query (config DB_QUERY_TIMEOUT_MS) */
  queryTimeoutMs?: number;
  /** the service's own statements prepared on each connection (config DB_PREPARED_STATEMENTS) */
  preparedStatements?: boolean;
  pooler?: DbPooler;
}

/** What a pool was created with, for those that open connections like its own (rollup threads). */
export interface PoolSettings {
  connectionString: string;
  queryTimeoutMs: number;
  pooler: DbPooler;
}

const settingsOfPool = new WeakMap<pg.Pool, PoolSettings & { begin: string }>();

// Dates in the API are UTC days: date <-> timestamptz conversions must not depend on the server.
// The API's short queries must not pay for JIT compilation when the planner misjudges a join.
// Floats print as their shortest round-trip digits, as JavaScript's, whatever the server's default
// (sensor pages written as JSON by PostgreSQL, sql/queries/sensor-data.sql).
const SESSION_OPTIONS = '-c TimeZone=UTC -c jit=off -c extra_float_digits=1';
const SET_TIME_ZONE = "SET TimeZone TO 'UTC'";

const serverTimeoutMs = (queryTimeoutMs: number) => Math.max(queryTimeoutMs - SERVER_MARGIN_MS, 500);

/**
 * A pool's connection settings under `pooler`, and the statement that opens its transactions.
 * Also what the start-up check connects with (src/db/connection-checks.ts).
 */
export function connectionSettings(
  connectionString: string,
  queryTimeoutMs: number,
  pooler: DbPooler,
): { config: pg.PoolConfig; begin: string } {
  const common: pg.PoolConfig = {
    connectionString,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    query_timeout: queryTimeoutMs,
    // a dead peer is noticed by TCP too, not only by the deadline of a query in flight
    keepAlive: true,
    application_name: 'coldtrack-api',
  };
  if (pooler === 'none') {
    return { config: { ...common, statement_timeout: serverTimeoutMs(queryTimeoutMs), options: SESSION_OPTIONS }, begin: 'BEGIN' };
  }
  return {
    config: { ...common, onConnect: async (client) => void (await client.query(SET_TIME_ZONE)) },
    begin: `BEGIN; SET LOCAL statement_timeout = ${serverTimeoutMs(queryTimeoutMs)}; SET LOCAL jit = off; SET LOCAL extra_float_digits = 1`,
  };
}

// numeric and bigint stay strings (exact money, ids beyond 2^53); int4 arrays are parsed by pg
export function createPool(
  connectionString: string,
  max: number,
  { onError = () => {}, queryTimeoutMs = DEFAULT_QUERY_TIMEOUT_MS, preparedStatements = true, pooler = 'none' }: PoolOptions = {},
) {
  const { config, begin } = connectionSettings(connectionString, queryTimeoutMs, pooler);
  const pool = new pg.Pool({ ...config, Client: preparedStatements ? PreparingClient : DeadlineClient, max, idleTimeoutMillis: 30_000 });
  settingsOfPool.set(pool, { connectionString, queryTimeoutMs, pooler, begin });
  pool.on('error', onError);
  // pg-pool listens for a client's errors only while it is idle; a client checked out (a
  // transaction, a COPY) whose connection drops emits 'error' with no listener, which ends the
  // process. Its holder already learns of it through the query that fails (or its next one), and
  // a client released after that is discarded, so the event itself is only swallowed here.
  pool.on('connect', (client) => client.on('error', () => {}));
  // pg-pool ends a client released with an error right after this event; a deadline's client
  // first asks the server to cancel its statement (DeadlineClient.end waits for that)
  pool.on('release', (error: Error | undefined, client: pg.PoolClient) => {
    if (error?.message === QUERY_DEADLINE_MESSAGE && client instanceof DeadlineClient) client.cancelStatement();
  });
  traceQueries(pool); // only with tracing on (src/db/query-tracing.ts)
  return pool;
}

/** The settings `pool` was created with (one made otherwise than by createPool: read from its options). */
export function poolSettings(pool: pg.Pool): PoolSettings {
  const settings = settingsOfPool.get(pool);
  if (settings) return { connectionString: settings.connectionString, queryTimeoutMs: settings.queryTimeoutMs, pooler: settings.pooler };
  const options = (pool as pg.Pool & { options: pg.PoolConfig }).options;
  return { connectionString: options.connectionString!, queryTimeoutMs: options.query_timeout ?? DEFAULT_QUERY_TIMEOUT_MS, pooler: 'none' };
}

/**
 * A client that runs the service's registered statements (src/db/statements.ts) as named ones:
 * PostgreSQL parses each once per connection and, once five runs show a generic plan is no
 * costlier, stops planning it. Every other text runs unnamed as before. Through the pool's
 * Client option, so pool.query and clients checked out for transactions behave alike.
 */
class PreparingClient extends DeadlineClient {
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
 * its connection may be stuck mid-statement. Past a deadline there is no ROLLBACK: the statement
 * is cancelled and the connection closed, which ends the transaction.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let failure: Error | undefined;
  try {
    await client.query(settingsOfPool.get(pool)?.begin ?? 'BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    if (!(error instanceof pg.DatabaseError)) failure = error as Error;
    // past a deadline the statement is still running: a ROLLBACK would queue behind it (for up to
    // its own deadline); the connection is cancelled and closed instead, which ends the transaction
    if (failure?.message !== QUERY_DEADLINE_MESSAGE)
      await client.query('ROLLBACK').catch((rollbackError: Error) => (failure ??= rollbackError));
    throw error;
  } finally {
    client.release(failure);
  }
}
