// The service behind PgBouncer in transaction mode (Debian's 1.18, test/helpers/pgbouncer.ts) on a
// private PostgreSQL 15, with the settings docs/operations.md gives: DATABASE_URL through the
// pooler, DB_POOLER=transaction, DATABASE_SESSION_URL straight to PostgreSQL, jit off for the
// database. Two instances of two cluster workers each, every worker's pool (DB_POOL_MAX 5: 20
// client connections) larger than the pooler's server pool (6). Every guarantee holds as direct:
//   - every endpoint answers, and 600 requests stay within the pooler's server connections;
//   - a revoked token is refused at once by all four workers;
//   - a unit moved to another company, or soft-deleted, is refused within a second everywhere
//     (the unit directory listens on the session URL);
//   - a table lock: requests give up at their deadline, and no backend is left waiting for them
//     (their statements are cancelled through the pooler), nor more backends than the pooler's.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import t, { type Test } from 'tap';
import { mintEmployeeJwt } from '../../src/auth/jwt.js';
import { TEST_JWT_SECRET } from '../helpers/app.js';
import { migrateWithProfile } from '../helpers/db.js';
import { createCompany } from '../helpers/fixtures.js';
import { startPrivatePostgres } from '../helpers/pg-private.js';
import { startPgBouncer } from '../helpers/pgbouncer.js';
import { ALL_SCOPES } from '../helpers/tokens.js';
import { type Cluster, dataRequests, DATA_PATH, send, startCluster, startRedis, statusCounts, until } from './harness.js';

const SERVER_POOL = 6;
const started = Date.now();
const server = await startPrivatePostgres(t);
const database = await server.createDatabase();
await migrateWithProfile(database.url, 'postgres');
// as docs/operations.md says: statements outside a transaction run under the database's defaults
await server.query(`ALTER DATABASE ${database.name} SET jit = off`);
// the test's own connections, told apart from the pooler's in pg_stat_activity
const direct = new pg.Pool({ connectionString: database.url, max: 3, application_name: 'test-direct' });
direct.on('error', () => {});
t.teardown(() => direct.end());
const acme = await createCompany(direct, 'Acme');
const other = await createCompany(direct, 'Other');
const bouncer = await startPgBouncer(t, { serverPort: server.port, defaultPoolSize: SERVER_POOL });
const redis = await startRedis(t);
t.comment(`PostgreSQL ${server.port}, PgBouncer ${bouncer.port}, ready in ${Date.now() - started} ms`);

const env = {
  DATABASE_URL: bouncer.url(database.name),
  DATABASE_SESSION_URL: database.url,
  DB_POOLER: 'transaction',
  DB_POOL_MAX: '5',
  REDIS_URL: redis.url,
};
const instances = (await Promise.all([startCluster(t, env), startCluster(t, env)])) as [Cluster, Cluster];
const [one, two] = instances;
const jwt = { authorization: `Bearer ${await mintEmployeeJwt({ secret: TEST_JWT_SECRET, userId: acme.employeeId, ttlSeconds: 3600 })}` };
const otherJwt = {
  authorization: `Bearer ${await mintEmployeeJwt({ secret: TEST_JWT_SECRET, userId: other.employeeId, ttlSeconds: 3600 })}`,
};

async function createToken(on: Cluster, headers = jwt, cooling_unit_ids: number[] = []) {
  const reply = await send(on.baseUrl, '/api/v1/api-tokens', {
    method: 'POST',
    headers,
    body: { name: 'pooled', scopes: ALL_SCOPES, cooling_unit_ids, expires_at: null },
  });
  if (reply.status !== 201) throw new Error(`token creation: ${reply.status} ${reply.body}`);
  const { id, token } = reply.json<{ id: string; token: string }>();
  return { id, headers: { authorization: `Bearer ${token}` } };
}

interface Backends {
  /** the pooler's server connections */
  pooled: number;
  listeners: number;
  /** backends waiting for a lock, the test's own excluded */
  waiting: number;
}
const BACKENDS = `SELECT count(*) FILTER (WHERE application_name NOT IN ('test-direct', 'coldtrack-api-listener'))::int AS pooled,
    count(*) FILTER (WHERE application_name = 'coldtrack-api-listener')::int AS listeners,
    count(*) FILTER (WHERE wait_event_type = 'Lock' AND application_name <> 'test-direct')::int AS waiting
  FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`;
const backends = async () => (await direct.query<Backends>(BACKENDS, [database.name])).rows[0]!;

const day = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);

t.test('ready, and every endpoint answers through the pooler', async (t) => {
  for (const instance of instances) {
    const ready = await send(instance.baseUrl, '/readyz');
    t.equal(ready.status, 200, ready.body);
  }
  const token = await createToken(one);
  const unit = acme.unitIds[0]!;
  const reads: Array<[string, Record<string, string>]> = [
    ['/api/v1/api-tokens?page_size=10', jwt],
    [`/api/v1/api-tokens/${token.id}`, jwt],
    ['/api/v1/cooling-units', jwt],
    ...['users', 'utilization', 'revenue', 'impact'].map(
      (name) =>
        [`/api/v1/analytics/${name}?start_date=${day}&end_date=${day}&page_size=10`, token.headers] as [string, Record<string, string>],
    ),
    [`/api/v1/sensor-data?cooling_unit_id=${unit}&start_date=${day}&end_date=${day}&page_size=10`, token.headers],
  ];
  for (const instance of instances) {
    for (const [path, headers] of reads) {
      const reply = await send(instance.baseUrl, path, { headers });
      t.equal(reply.status, 200, `${path.split('?')[0]}: ${reply.status === 200 ? 'answered' : reply.body}`);
    }
    const validated = await send(instance.baseUrl, '/v1/users/validate-cooling-user-id/', {
      method: 'POST',
      body: { cooling_user_id: 'Acme-F1' },
    });
    t.equal(validated.status, 200, `validate-cooling-user-id: ${validated.body}`);
  }
  const rotated = await send(two.baseUrl, `/api/v1/api-tokens/${token.id}/rotate`, { method: 'POST', headers: jwt, body: {} });
  t.equal(rotated.status, 201, `rotate (a transaction through the pooler): ${rotated.status === 201 ? 'the new token' : rotated.body}`);
  const revoked = await send(one.baseUrl, `/api/v1/api-tokens/${token.id}/revoke`, { method: 'POST', headers: jwt });
  t.equal(revoked.status, 200, `revoke: ${revoked.status === 200 ? 'revoked' : revoked.body}`);
  t.equal((await backends()).listeners, 4, 'one listener per cluster worker, on the session URL');
});

t.test('a revoked token is refused at once by every worker of both instances', async (t) => {
  const token = await createToken(two);
  const warm = await dataRequests(instances, 24, token.headers);
  t.same(statusCounts(warm.replies), { 200: 24 }, 'in use');
  t.equal(warm.workers, 4, 'cached by all four workers');
  const revoked = await send(one.baseUrl, `/api/v1/api-tokens/${token.id}/revoke`, { method: 'POST', headers: jwt });
  t.equal(revoked.status, 200, 'revoked through one instance');
  const after = await dataRequests(instances, 40, token.headers);
  t.same(statusCounts(after.replies), { 401: 40 }, '0 of 40 accepted');
  t.equal(after.workers, 4, 'on all four workers');
});

/**
 * ms until rounds of requests over both instances all find this unit refused (404), from when
 * `change` committed; a token of its own (the per-token limit is 100 a minute), of the same company
 * (the units are cached per company).
 */
async function refusedWithin(t: Test, unit: number, change: () => Promise<unknown>) {
  const { headers } = await createToken(one);
  await change();
  const committed = performance.now();
  const path = `${DATA_PATH}&cooling_unit_id=${unit}`;
  await until(
    `unit ${unit} refused everywhere`,
    async () => {
      const { replies } = await dataRequests(instances, 8, headers, path);
      return replies.every((reply) => reply.status === 404);
    },
    5000,
    0,
  );
  const waited = performance.now() - committed;
  const confirm = await dataRequests(instances, 24, headers, path);
  t.same(statusCounts(confirm.replies), { 404: 24 }, `then refused by all of ${confirm.workers} workers`);
  return waited;
}

t.test('a unit moved to another company, then one soft-deleted: refused within a second on every worker', async (t) => {
  const [moved, deleted, kept] = acme.unitIds as [number, number, number];
  const token = await createToken(one);
  for (const unit of [moved, deleted, kept]) {
    const { replies, workers } = await dataRequests(instances, 16, token.headers, `${DATA_PATH}&cooling_unit_id=${unit}`);
    t.same(statusCounts(replies), { 200: 16 }, `unit ${unit} readable (cached by ${workers} workers)`);
  }
  const movedMs = await refusedWithin(t, moved, () =>
    direct.query('UPDATE cooling_units SET company_id = $1, location_id = $2 WHERE id = $3', [other.companyId, other.locationId, moved]),
  );
  t.ok(movedMs < 1000, `moved unit refused everywhere ${Math.round(movedMs)} ms after the commit`);
  const otherToken = await createToken(two, otherJwt);
  t.equal(
    (await send(one.baseUrl, `${DATA_PATH}&cooling_unit_id=${moved}`, { headers: otherToken.headers })).status,
    200,
    'readable by its new company',
  );

  const deletedMs = await refusedWithin(t, deleted, () =>
    direct.query('UPDATE cooling_units SET deleted = true, deleted_at = now() WHERE id = $1', [deleted]),
  );
  t.ok(deletedMs < 1000, `deleted unit refused everywhere ${Math.round(deletedMs)} ms after the commit`);
  t.equal(
    (await send(two.baseUrl, `${DATA_PATH}&cooling_unit_id=${kept}`, { headers: token.headers })).status,
    200,
    'the other unit still readable',
  );
});

t.test("600 requests, 100 at a time, stay within the pooler's server connections", async (t) => {
  const tokens = await Promise.all(Array.from({ length: 6 }, (_, i) => createToken(instances[i % 2]!)));
  let most = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      most = Math.max(most, (await backends()).pooled);
      await sleep(20);
    }
  })();
  const replies = [];
  for (const token of tokens) replies.push(...(await dataRequests(instances, 100, token.headers)).replies);
  sampling = false;
  await sampler;
  t.same(statusCounts(replies), { 200: 600 }, 'all 600 answered');
  t.ok(
    most > 0 && most <= SERVER_POOL,
    `at most ${most} server connections from the pooler (its pool: ${SERVER_POOL}; the workers' pools: 20)`,
  );
});

t.test('a table lock: requests give up at their deadline, and leave no backend waiting', async (t) => {
  // fresh tokens: each request's first lookup reads api_tokens, under the 3 s lookup deadline
  const tokens = await Promise.all(Array.from({ length: 24 }, (_, i) => createToken(instances[i % 2]!)));
  const locker = await direct.connect();
  t.teardown(() => locker.release());
  await locker.query('BEGIN');
  await locker.query('LOCK TABLE api_tokens IN ACCESS EXCLUSIVE MODE');
  try {
    const replies = await Promise.all(
      tokens.map((token, i) => send(instances[i % 2]!.baseUrl, DATA_PATH, { headers: token.headers, timeoutMs: 15_000 })),
    );
    t.same(statusCounts(replies), { 503: 24 }, 'all 24 answered 503');
    const slowest = Math.max(...replies.map((reply) => reply.ms));
    t.ok(slowest < 8000, `the last within ${Math.round(slowest)} ms (lookup deadline 3 s)`);
    const gaveUp = performance.now();
    // the cancel requests are on their way as the 503s go out: give them a moment to land
    const settled = await until(
      'no backend waiting for the lock',
      async () => {
        const now = await backends();
        return now.waiting === 0 && now;
      },
      3000,
      50,
    ).catch(async () => backends());
    const waiters =
      settled.waiting === 0
        ? []
        : (
            await direct.query(
              `SELECT pid, application_name, state, query, now() - query_start AS waited FROM pg_stat_activity
       WHERE datname = $1 AND wait_event_type = 'Lock' AND application_name <> 'test-direct'`,
              [database.name],
            )
          ).rows;
    t.equal(
      settled.waiting,
      0,
      `no backend waiting for the lock ${Math.round(performance.now() - gaveUp)} ms after the last request gave up${waiters.length ? `: ${JSON.stringify(waiters)}` : ''}`,
    );
    t.ok(settled.pooled <= SERVER_POOL, `${settled.pooled} server connections (pooler's pool: ${SERVER_POOL})`);
  } finally {
    await locker.query('ROLLBACK');
  }
  const after = await dataRequests(instances, 8, tokens[0]!.headers);
  t.same(statusCounts(after.replies), { 200: 8 }, 'answering again once the lock is gone');
});

t.test('nothing of the service was refused by the pooler, and no notification was lost on it', async (t) => {
  t.notMatch(bouncer.output(), /unsupported startup parameter/, 'no start-up parameter refused');
  t.notMatch(bouncer.output(), /when not linked/, 'no notification arrived on a pooled server connection');
  for (const instance of instances) {
    t.notMatch(instance.output(), /need a session/, 'no session warning');
    t.notMatch(instance.output(), /jit is on/, 'no advice on jit (the database has it off)');
  }
});
