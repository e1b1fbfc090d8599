// The PostgreSQL pool. Short connect timeout so an outage answers 503 quickly instead of
// hanging, a statement timeout as a backstop, and idle-client errors logged, not fatal.
import pg from 'pg';

// numeric and bigint stay strings (exact money, ids beyond 2^53); int4 arrays are parsed by pg
export function createPool(connectionString: string, max: number, onError: (error: Error) => void = () => {}) {
  const pool = new pg.Pool({
    connectionString,
    max,
    connectionTimeoutMillis: 3000,
    idleTimeoutMillis: 30_000,
    statement_timeout: 30_000,
    // client side too: a database that goes silent on an open connection must not hold a request
    query_timeout: 35_000,
    application_name: 'coldtrack-api',
    // dates in the API are UTC days: date <-> timestamptz conversions must not depend on the server
    // and the API's short queries must not pay for JIT compilation when the planner misjudges a join
    options: '-c TimeZone=UTC -c jit=off',
  });
  pool.on('error', onError);
  return pool;
}
