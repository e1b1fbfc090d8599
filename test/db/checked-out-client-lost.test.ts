// A client checked out of a pool (a transaction, a COPY) whose connection drops must not end the
// process: pg emits 'error' on it, and pg-pool listens only while a client is idle
// (src/db/pool.ts). Played through a TCP proxy cut while two clients are out, one idle in its
// transaction and one mid-statement; the pool serves again once the proxy is back.
import t from 'tap';
import { createPool } from '../../src/db/pool.js';
import { adminUrl } from '../helpers/db.js';
import { proxyInFrontOf } from '../helpers/tcp-proxy.js';

const { proxy, url: viaProxy } = await proxyInFrontOf(t, adminUrl);
const pool = createPool(viaProxy, 4);
t.teardown(() => pool.end());

t.test('the connection of a checked-out client drops: its holder gets the error, the process lives on', async (t) => {
  const uncaught: Error[] = [];
  const onUncaught = (error: Error) => uncaught.push(error);
  process.prependListener('uncaughtException', onUncaught);
  t.teardown(() => process.removeListener('uncaughtException', onUncaught));

  const idleInTransaction = await pool.connect();
  await idleInTransaction.query('BEGIN');
  const busy = await pool.connect();
  const statement = busy.query('SELECT pg_sleep(5)').then(
    () => null,
    (error: Error) => error,
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  await proxy.refuse();
  const failed = await statement;
  t.match(failed?.message, /terminated/, `the running statement fails: ${failed?.message}`);
  const next = await idleInTransaction.query('SELECT 1').then(
    () => null,
    (error: Error) => error,
  );
  t.ok(next, `the idle client's next statement fails: ${next?.message}`);
  busy.release(failed!);
  idleInTransaction.release(next!);
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.same(
    uncaught.map((error) => error.message),
    [],
    'no error reached the process uncaught',
  );

  await proxy.open();
  const { rows } = await pool.query<{ one: number }>('SELECT 1 AS one');
  t.equal(rows[0]!.one, 1, 'the pool serves again once the database is reachable');
});
