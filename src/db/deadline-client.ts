// The pool's client class: pg.Client with the service's client-side query deadlines, watched per
// connection (src/db/query-deadlines.ts) rather than by pg's timer per query, and a statement
// whose deadline passed cancelled on the server before the connection is closed.
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { type CancelTarget, sendCancelRequest } from './cancel.js';
import { QueryDeadlines } from './query-deadlines.js';

/** How long a connection whose deadline passed keeps asking for its statement to be cancelled. */
const CANCEL_WAIT_MS = 2000;
const CANCEL_RETRY_MS = 200;

/** The error of a query past its client deadline: pg's own message for query_timeout (it has no code). */
export const QUERY_DEADLINE_MESSAGE = 'Query read timeout';

type Callback = (error: Error | undefined, result?: unknown) => void;
type Run = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/** The parts of pg.Client this class reaches past its typings (pg 8: stable for years). */
interface ClientInternals {
  connectionParameters: { query_timeout?: number };
  connection: NodeJS.EventEmitter;
  _queryQueue: unknown[];
}

interface QueryInternals {
  handleError(error: Error, connection: unknown): void;
}

/**
 * A client whose statement can be cancelled on the server when its deadline passed: the cancel
 * request goes out before the connection is closed (a pooler forwards it only while the client is
 * still connected to it), and again every CANCEL_RETRY_MS until the server has answered the
 * statement, for up to CANCEL_WAIT_MS: a client still queued in PgBouncer for a server connection
 * has nothing to cancel yet (its request is dropped), and may be handed one, statement and all, the
 * moment after. Then the connection is closed.
 *
 * Deadlines: the connection's query_timeout (the pool's) or a query's own `query_timeout`, as with
 * pg, failing the query with QUERY_DEADLINE_MESSAGE exactly as pg's timer would: the answer that
 * arrives later is dropped, and a query still queued is never sent. Submittables (COPY streams)
 * keep pg's own timer.
 */
export class DeadlineClient extends pg.Client {
  private cancelling: Promise<void> | null = null;
  private readonly deadlines: QueryDeadlines;

  constructor(config?: string | pg.ClientConfig) {
    super(config);
    const parameters = (this as unknown as ClientInternals).connectionParameters;
    this.deadlines = new QueryDeadlines(parameters.query_timeout ?? 0);
    parameters.query_timeout = 0; // pg's per-query timer off: this client watches the deadlines
  }

  // pg's query() overloads: (text | config | submittable, values?, callback?)
  override query(config: unknown, values?: unknown, callback?: unknown): never {
    const run = super.query as unknown as Run;
    if (config === null || (typeof config !== 'string' && typeof config !== 'object'))
      return run.call(this, config, values, callback) as never;
    const own = typeof config === 'object' ? (config as { query_timeout?: number }).query_timeout : undefined;
    const ms = own || this.deadlines.defaultMs;
    if (typeof (config as { submit?: unknown }).submit === 'function') {
      if (own === undefined && ms) (config as { query_timeout?: number }).query_timeout = ms;
      return run.call(this, config, values, callback) as never;
    }
    if (!ms) return run.call(this, config, values, callback) as never;

    // The query's callback is given to its constructor and never assigned afterwards. pg's own
    // timer assigns a wrapper to query.callback once the query exists, and that alone made every
    // query's objects (its rows, the pool's callbacks, the request waiting on them) survive the
    // young-generation collections and be promoted, to be freed only by full collections: the
    // garbage collector's share of the cheapest page's CPU (bench P1, small-page).
    let reply = (typeof values === 'function' ? values : callback) as Callback | undefined;
    let answered: Promise<unknown> | undefined;
    if (!reply) answered = new Promise((resolve, reject) => (reply = (error, result) => (error ? reject(error) : resolve(result))));
    let dropped = false;
    const deadline = this.deadlines.start(ms, () => {
      const error = new Error(QUERY_DEADLINE_MESSAGE);
      dropped = true; // whatever the server says later is for nobody
      const { _queryQueue: queue, connection } = this as unknown as ClientInternals;
      const queued = queue.indexOf(query);
      if (queued > -1) queue.splice(queued, 1); // not sent yet: never will be
      process.nextTick(() => query.handleError(error, connection));
      reply!(error);
    });
    const answer: Callback = (error, result) => {
      if (dropped) return;
      this.deadlines.finish(deadline);
      reply!(error, result);
    };
    const query = new pg.Query(
      config as pg.QueryConfig,
      typeof values === 'function' ? undefined : (values as unknown[]),
      answer,
    ) as unknown as QueryInternals;
    run.call(this, query);
    return answered as never; // undefined in the callback form, as pg's
  }

  cancelStatement() {
    type Connected = { host: string; port: number; processID: number | null; secretKey: number | null };
    const { host, port, processID, secretKey } = this as unknown as Connected;
    if (this.cancelling || processID === null || secretKey === null) return;
    this.cancelling = this.cancelUntilAnswered({ host, port, processID, secretKey });
  }

  private async cancelUntilAnswered(target: CancelTarget) {
    const connection = (this as unknown as ClientInternals).connection;
    let answered = false;
    const answer = new Promise<void>((resolve) => {
      const done = () => {
        answered = true;
        connection.off('readyForQuery', done);
        connection.off('end', done);
        resolve();
      };
      connection.once('readyForQuery', done);
      connection.once('end', done);
    });
    const deadline = Date.now() + CANCEL_WAIT_MS;
    while (!answered && Date.now() < deadline) {
      await sendCancelRequest(target, deadline - Date.now());
      await Promise.race([answer, sleep(Math.max(0, Math.min(CANCEL_RETRY_MS, deadline - Date.now())))]);
    }
  }

  // pg's end() has a promise and a callback form; pg-pool uses the callback one
  override end(callback?: (error: Error) => void): never {
    this.deadlines.close();
    const end = super.end.bind(this) as (callback?: (error: Error) => void) => never;
    const cancelling = this.cancelling;
    if (!cancelling) return end(callback);
    this.cancelling = null;
    // pg's end() destroys the socket while a statement is still running (the server did not
    // answer the cancel in time); one the cancel ended leaves politely, its server connection clean
    const ended = cancelling.then(() => end());
    if (!callback) return ended as never;
    ended.then(() => callback(undefined as unknown as Error), callback);
    return undefined as never;
  }
}
