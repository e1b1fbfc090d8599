// Client-side query deadlines, watched per connection (src/db/query-deadlines.ts) by the pool's
// client (src/db/deadline-client.ts) instead of pg's timer per query:
//   - the watcher alone: each deadline expires once, in time, never after its query finished, and
//     the earliest one arms the timer;
//   - on the shared PostgreSQL: a query past its deadline fails with pg's own message, in the
//     promise and the callback form, whether it was sent or still queued behind another; its late
//     answer goes nowhere; queries in time answer as before; a connection running many queries
//     arms its timer about once, not once per query.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import t from 'tap';
import { createPool, QUERY_DEADLINE_MESSAGE } from '../../src/db/pool.js';
import { QueryDeadlines } from '../../src/db/query-deadlines.js';
import { createTestDatabase } from '../helpers/db.js';

t.test('the watcher: expiries in time, once, earliest first; none after finish or close', async (t) => {
  const deadlines = new QueryDeadlines(0);
  const expired: string[] = [];
  const started = performance.now();
  const at: Record<string, number> = {};
  const watch = (name: string, ms: number) =>
    deadlines.start(ms, () => {
      expired.push(name);
      at[name] = performance.now() - started;
    });
  watch('long', 300);
  watch('short', 60); // earlier than the armed one: re-arms
  const finished = watch('finished', 30);
  deadlines.finish(finished);
  await sleep(150);
  t.same(expired, ['short'], 'the short deadline expired first, the finished query never');
  t.ok(at.short! >= 60 && at.short! < 140, `short expired at its deadline (${Math.round(at.short!)} ms)`);
  await sleep(250);
  t.same(expired, ['short', 'long'], 'then the long one, once');
  t.ok(at.long! >= 300, `long expired no earlier than its deadline (${Math.round(at.long!)} ms)`);

  watch('closed', 20);
  deadlines.close();
  await sleep(60);
  t.same(expired, ['short', 'long'], 'nothing expires once the connection closed');
});

t.test('a query past its deadline fails with pg message; one in time answers; the late answer goes nowhere', async (t) => {
  const db = await createTestDatabase(t);
  const pool = createPool(db.url, 1, { queryTimeoutMs: 10_000, onError: () => {} });
  t.teardown(() => pool.end());

  t.same((await pool.query<{ n: number }>('SELECT 1 AS n')).rows, [{ n: 1 }], 'in time: the rows, promise form');

  const started = performance.now();
  const late = await pool.query({ text: 'SELECT pg_sleep(1)', query_timeout: 200 } as pg.QueryConfig).then(
    () => null,
    (error: Error) => error,
  );
  const ms = performance.now() - started;
  t.equal(late?.message, QUERY_DEADLINE_MESSAGE, 'past its own deadline: pg read-timeout message');
  t.ok(ms >= 200 && ms < 900, `answered at the deadline, not at the statement's end (${Math.round(ms)} ms)`);

  // the pool discarded that connection (released with the error): the next query gets a fresh one
  t.same((await pool.query<{ n: number }>('SELECT 2 AS n')).rows, [{ n: 2 }], 'the pool answers again at once');
  await sleep(1200); // the abandoned statement's answer would have arrived by now
  t.equal(pool.totalCount, 1, 'one connection: the timed-out one was not returned to the pool');
});

t.test('on a checked-out client: callback form, a queued query timed out before it is sent, one timer for many queries', async (t) => {
  const db = await createTestDatabase(t);
  const pool = createPool(db.url, 1, { queryTimeoutMs: 10_000, onError: () => {} });
  t.teardown(() => pool.end());
  const client = await pool.connect();
  let released = false;
  t.teardown(() => {
    if (!released) client.release(true);
  });

  const byCallback = await new Promise<Error | undefined>((resolve) =>
    client.query({ text: 'SELECT pg_sleep(0.6)', query_timeout: 150 } as pg.QueryConfig, (error: Error | undefined) => resolve(error)),
  );
  t.equal(byCallback?.message, QUERY_DEADLINE_MESSAGE, 'callback form: the deadline error');

  // the sleep still runs on the server; a query queued behind it on this client is never sent
  const queued = await client.query({ text: 'SELECT 42 AS n', query_timeout: 100 } as pg.QueryConfig).then(
    () => 'answered',
    (error: Error) => error.message,
  );
  t.equal(queued, QUERY_DEADLINE_MESSAGE, 'the queued query expired in the queue');
  client.release(new Error('done')); // past a deadline the service discards the connection
  released = true;

  const fresh = await pool.connect();
  const realSetTimeout = globalThis.setTimeout;
  let timers = 0;
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
    timers++;
    return realSetTimeout(...args);
  }) as typeof setTimeout;
  try {
    for (let i = 0; i < 200; i++) await fresh.query('SELECT $1::int AS n', [i]);
  } finally {
    globalThis.setTimeout = realSetTimeout;
    fresh.release();
  }
  t.ok(timers <= 2, `200 queries armed ${timers} timer(s), not one per query`);
});
