// The pool's settings under each DB_POOLER mode, and its deadlines held on the server, checked on
// the connections themselves (the shared PostgreSQL, no pooler in between: what the service asks
// for, not what PgBouncer does with it; test/operations/pgbouncer.test.ts has that):
//   - none: the settings travel as start-up parameters, on every statement;
//   - transaction: nothing but user, database and application name at start-up; TimeZone SET on
//     connect; statement_timeout, jit and extra_float_digits SET LOCAL by each transaction;
//   - a statement whose client deadline passed is cancelled on the server, not left running.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import t from 'tap';
import { createPool, inTransaction, lookup, QUERY_DEADLINE_MESSAGE } from '../../src/db/pool.js';
import { createTestDatabase } from '../helpers/db.js';

const SETTINGS = `SELECT current_setting('statement_timeout') AS statement_timeout, current_setting('jit') AS jit,
  current_setting('TimeZone') AS time_zone, current_setting('extra_float_digits') AS extra_float_digits`;

t.test("DB_POOLER=none: the settings are the session's, from its start-up parameters", async (t) => {
  const db = await createTestDatabase(t);
  const pool = createPool(db.url, 1, { queryTimeoutMs: 10_000 });
  t.teardown(() => pool.end());
  t.same((await pool.query(SETTINGS)).rows[0], { statement_timeout: '9s', jit: 'off', time_zone: 'UTC', extra_float_digits: '1' });
});

t.test('DB_POOLER=transaction: TimeZone on connect, the rest per transaction, no start-up parameter', async (t) => {
  const db = await createTestDatabase(t);
  // the database's own defaults, which a statement outside a transaction runs under
  await db.pool.query(`ALTER DATABASE ${db.name} SET TimeZone = 'Pacific/Auckland'`);
  const pool = createPool(db.url, 1, { queryTimeoutMs: 10_000, pooler: 'transaction' });
  t.teardown(() => pool.end());
  const outside = (await pool.query(SETTINGS)).rows[0];
  t.same(
    outside,
    { statement_timeout: '0', jit: 'on', time_zone: 'UTC', extra_float_digits: '1' },
    "outside a transaction: TimeZone as set on connect, the rest the database's",
  );
  const inside = await inTransaction(pool, async (client) => (await client.query(SETTINGS)).rows[0]);
  t.same(
    inside,
    { statement_timeout: '9s', jit: 'off', time_zone: 'UTC', extra_float_digits: '1' },
    "inside one of its transactions: the service's",
  );
  t.same((await pool.query(SETTINGS)).rows[0], outside, 'and only there (SET LOCAL)');
});

t.test('a statement past its client deadline is cancelled on the server, in both modes', async (t) => {
  const db = await createTestDatabase(t);
  await db.pool.query('CREATE TABLE locked (id int)');
  const locker = new pg.Client({ connectionString: db.url, application_name: 'test-locker' });
  await locker.connect();
  t.teardown(() => locker.end());
  for (const pooler of ['none', 'transaction'] as const) {
    // server-side statement_timeout 9 s: only the cancel request can end the lookup's statement at 3 s
    const pool = createPool(db.url, 2, { queryTimeoutMs: 10_000, pooler, onError: () => {} });
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE locked IN ACCESS EXCLUSIVE MODE');
    try {
      const started = performance.now();
      const error = await lookup(pool, 'SELECT count(*) FROM locked', []).then(
        () => null,
        (caught: Error) => caught,
      );
      t.equal(
        error?.message,
        QUERY_DEADLINE_MESSAGE,
        `${pooler}: the lookup gave up at its deadline (${Math.round(performance.now() - started)} ms)`,
      );
      const waiting = async () =>
        Number(
          (
            await db.pool.query<{ n: string }>(
              "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND application_name = 'coldtrack-api'",
              [db.name],
            )
          ).rows[0]!.n,
        );
      const gaveUp = performance.now();
      while ((await waiting()) > 0 && performance.now() - gaveUp < 3000) await sleep(50);
      t.equal(await waiting(), 0, `${pooler}: no backend left waiting for the lock (${Math.round(performance.now() - gaveUp)} ms after)`);
    } finally {
      await locker.query('ROLLBACK');
      await pool.end();
    }
  }
});

t.test('a transaction meeting a lock: the server ends it at its statement_timeout, or the client at its deadline, at once', async (t) => {
  const db = await createTestDatabase(t);
  await db.pool.query('CREATE TABLE locked (id int)');
  const locker = new pg.Client({ connectionString: db.url, application_name: 'test-locker' });
  await locker.connect();
  t.teardown(() => locker.end());
  const waiting = async () =>
    Number(
      (
        await db.pool.query<{ n: string }>(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND application_name = 'coldtrack-api'",
          [db.name],
        )
      ).rows[0]!.n,
    );
  for (const pooler of ['none', 'transaction'] as const) {
    // a 2 s data deadline: statement_timeout 1 s on the server (with `transaction`, SET LOCAL by the BEGIN)
    const pool = createPool(db.url, 2, { queryTimeoutMs: 2000, pooler, onError: () => {} });
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE locked IN ACCESS EXCLUSIVE MODE');
    try {
      let started = performance.now();
      const insert = (queryTimeoutMs: number) =>
        inTransaction(pool, (client) =>
          client.query({ text: 'INSERT INTO locked VALUES (1)', query_timeout: queryTimeoutMs } as pg.QueryConfig),
        ).then(
          () => null,
          (caught: Error & { code?: string }) => caught,
        );
      const byServer = await insert(60_000);
      t.equal(
        byServer?.code,
        '57014',
        `${pooler}: the server cancelled the statement at its statement_timeout (${Math.round(performance.now() - started)} ms)`,
      );
      // a client deadline before the server's: answered at it, without a ROLLBACK queued behind
      // the statement (which would wait for the lock, up to its own deadline)
      const pool9 = createPool(db.url, 2, { queryTimeoutMs: 10_000, pooler, onError: () => {} });
      started = performance.now();
      const byClient = await inTransaction(pool9, (client) =>
        client.query({ text: 'INSERT INTO locked VALUES (2)', query_timeout: 1000 } as pg.QueryConfig),
      ).then(
        () => null,
        (caught: Error) => caught,
      );
      const took = performance.now() - started;
      t.equal(byClient?.message, QUERY_DEADLINE_MESSAGE, `${pooler}: the client gave up at its deadline`);
      t.ok(took < 1800, `${pooler}: and answered then (${Math.round(took)} ms)`);
      const gaveUp = performance.now();
      while ((await waiting()) > 0 && performance.now() - gaveUp < 3000) await sleep(50);
      t.equal(await waiting(), 0, `${pooler}: no backend left waiting for the lock`);
      await pool9.end();
    } finally {
      await locker.query('ROLLBACK');
      await pool.end();
    }
  }
  t.equal(Number((await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM locked')).rows[0]!.n), 0, 'nothing written');
});
