// Query spans, at the pool: src/tracing/start.ts installs a tracer here before any pool is made,
// and createPool (src/db/pool.ts) then wraps that pool's query() and connect(). With tracing off
// nothing is installed and pools are left exactly as they were. In src/db/ (and free of
// OpenTelemetry) because the rollup threads load src/db/pool.ts too: they install nothing, and
// time their own queries (workers/rollup-thread.ts).
//
// A span is named after the query, never its values: the name a query has in sql/queries/
// (`api-tokens.tokenForAuth`), or for other SQL only its first keyword (BEGIN, COMMIT, SET, ...).
// It starts when the service asks, in the asker's context: a query that waits for a free
// connection waits inside its own span (pg-pool would otherwise run it later in the context of
// whichever request released the connection).
import type pg from 'pg';

export interface QueryTracer {
  /** Whether a query made now would be traced (its caller's span records): nothing is built for one that would not. */
  recording(): boolean;
  around<T>(label: string, work: () => Promise<T>): Promise<T>;
}

let tracer: QueryTracer | null = null;
const labels = new Map<string, string>();

export function installQueryTracer(installed: QueryTracer | null) {
  tracer = installed;
}

/** Called by src/db/sql.ts for every query it loads: `file.queryName`. */
export function labelQuery(text: string, label: string) {
  labels.set(text, label);
}

/** The span name of a query text: its name in sql/queries/, else its first keyword only. */
export function queryLabel(text: string): string {
  return labels.get(text) ?? (/^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() || 'SQL');
}

const textOf = (config: unknown): string =>
  typeof config === 'string' ? config : typeof (config as { text?: unknown })?.text === 'string' ? (config as { text: string }).text : '';

type Run = (...args: unknown[]) => unknown;

/**
 * Traces `pool`'s queries when a tracer is installed: pool.query() as one span each; a client
 * checked out with `await pool.connect()` (transactions) traces its own queries while it is out,
 * and a client pg-pool checks out for pool.query() (callback form) does not, which would count
 * each query twice.
 */
export function traceQueries(pool: pg.Pool) {
  const active = tracer;
  if (!active) return;
  const query = pool.query.bind(pool) as Run;
  const connect = pool.connect.bind(pool) as Run;
  const checkedOut = new WeakSet<object>();
  const traced = new WeakSet<object>();
  pool.query = ((...args: unknown[]) => {
    if (typeof args[args.length - 1] === 'function' || !active.recording()) return query(...args);
    return active.around(queryLabel(textOf(args[0])), () => query(...args) as Promise<unknown>);
  }) as typeof pool.query;
  pool.connect = ((callback?: (error: Error | undefined, client: pg.PoolClient, done: unknown) => void) => {
    if (callback) {
      return connect((error: Error | undefined, client: pg.PoolClient, done: unknown) => {
        if (client) checkedOut.delete(client);
        callback(error, client, done);
      });
    }
    return (connect() as Promise<pg.PoolClient>).then((client) => {
      checkedOut.add(client);
      if (!traced.has(client)) {
        traced.add(client);
        const clientQuery = client.query.bind(client) as Run;
        client.query = ((...args: unknown[]) => {
          const last = args[args.length - 1];
          const submittable = typeof (args[0] as { submit?: unknown })?.submit === 'function';
          if (!checkedOut.has(client) || typeof last === 'function' || submittable || !active.recording()) return clientQuery(...args);
          return active.around(queryLabel(textOf(args[0])), () => clientQuery(...args) as Promise<unknown>);
        }) as typeof client.query;
      }
      return client;
    });
  }) as typeof pool.connect;
}
