// PostgreSQL becomes unreachable for the real cluster (a TCP proxy of this file's own between the
// service and the shared server is cut: the shared server keeps running for the other tests):
// requests that need the database answer 503 `unavailable` with Retry-After, quickly; /readyz is
// 503; no worker crashes; when the proxy opens again the service recovers by itself.
import t, { type Test } from 'tap';
import { withAdmin } from '../helpers/db.js';
import { proxyInFrontOf } from '../helpers/tcp-proxy.js';
import { createWorld, DATA_PATH, metricSum, type Reply, send, startCluster, startRedis, until } from './harness.js';

const world = await createWorld(t);
const redis = await startRedis(t);
const { proxy, url: viaProxy } = await proxyInFrontOf(t, world.databaseUrl);
// a 4 s query deadline (10 s by default) keeps the hung-database case short
const QUERY_DEADLINE_MS = 4000;
const cluster = await startCluster(t, {
  DATABASE_URL: viaProxy,
  REDIS_URL: redis.url,
  DB_QUERY_TIMEOUT_MS: String(QUERY_DEADLINE_MS),
});
const base = cluster.baseUrl;

const { headers: tokenHeaders } = await world.issue();
const jwtHeaders = { authorization: `Bearer ${await world.jwt(world.acme.employeeId)}` };

/** The requests that need the database: data (token cached or not), management, the public check. */
async function databaseRequests(): Promise<Array<[string, Reply]>> {
  return Promise.all([
    ...[0, 1, 2, 3].map(
      async (i) => [`data ${i}`, await send(base, DATA_PATH, { headers: tokenHeaders, timeoutMs: 10_000 })] as [string, Reply],
    ),
    send(base, '/api/v1/api-tokens', { headers: jwtHeaders, timeoutMs: 10_000 }).then((reply) => ['management', reply] as [string, Reply]),
    send(base, '/v1/users/validate-cooling-user-id/', { method: 'POST', body: { cooling_user_id: 'x' }, timeoutMs: 10_000 }).then(
      (reply) => ['validate', reply] as [string, Reply],
    ),
  ]);
}

function checkUnavailable(t: Test, replies: Array<[string, Reply]>, withinMs: number) {
  for (const [name, reply] of replies) {
    t.equal(reply.status, 503, `${name}: 503 (${reply.body.slice(0, 100)})`);
    t.match(reply.body, /"code":"unavailable"/, `${name}: the unavailable error`);
    t.ok(Number(reply.headers['retry-after']) > 0, `${name}: Retry-After ${reply.headers['retry-after']}`);
    t.ok(reply.ms < withinMs, `${name}: answered in ${Math.round(reply.ms)} ms`);
  }
}

async function recovery(t: Test) {
  const reopenedAt = performance.now();
  await proxy.resume();
  await until(
    'data requests to succeed again',
    async () => (await send(base, DATA_PATH, { headers: tokenHeaders })).status === 200,
    15_000,
    100,
  );
  const recoveredMs = performance.now() - reopenedAt;
  t.comment(`recovered ${Math.round(recoveredMs)} ms after PostgreSQL was reachable again`);
  t.ok(recoveredMs < 5000, 'recovered by itself');
  for (let i = 0; i < 4; i++) {
    t.equal((await send(base, DATA_PATH, { headers: tokenHeaders })).status, 200, `data request ${i} after the recovery (both workers)`);
  }
  t.equal((await send(base, '/api/v1/api-tokens', { headers: jwtHeaders })).status, 200, 'management after the recovery');
  t.equal((await send(base, '/readyz')).status, 200, '/readyz ready again');
}

t.test('warm: everything answers through the proxy', async (t) => {
  for (let i = 0; i < 4; i++) t.equal((await send(base, DATA_PATH, { headers: tokenHeaders })).status, 200);
  t.equal((await send(base, '/readyz')).status, 200);
});

t.test('PostgreSQL down (connections cut, new ones refused): 503 at once, then recovery', async (t) => {
  const workers = cluster.workerPids();
  await proxy.refuse();
  checkUnavailable(t, await databaseRequests(), 4000);
  const ready = await send(base, '/readyz');
  t.equal(ready.status, 503, '/readyz: 503');
  t.same(ready.json().checks, { database: 'unreachable', redis: 'ok' });
  t.equal((await send(base, '/healthz')).status, 200, '/healthz: the process is alive');
  // a while of failing requests (and pool errors) must not take a worker down
  for (let i = 0; i < 5; i++) await databaseRequests();
  t.same(cluster.workerPids().sort(), workers.sort(), 'the same workers are alive');
  t.notMatch(cluster.output(), /died/, 'no worker died');
  await recovery(t);
});

t.test('PostgreSQL silent (connections cut, new ones never answered): 503 within the connect timeout', async (t) => {
  const workers = cluster.workerPids();
  await proxy.blackHole();
  checkUnavailable(t, await databaseRequests(), 4000);
  const ready = await send(base, '/readyz', { timeoutMs: 10_000 });
  t.equal(ready.status, 503, `/readyz: 503 in ${Math.round(ready.ms)} ms`);
  t.same(cluster.workerPids().sort(), workers.sort(), 'the same workers are alive');
  t.notMatch(cluster.output(), /died/, 'no worker died');
  await recovery(t);
});

t.test('PostgreSQL hung (open connections go silent, new ones never answered): 503 within the query deadline, never 500', async (t) => {
  const workers = cluster.workerPids();
  // every worker's pool holds open connections to swallow
  for (let i = 0; i < 6; i++) t.equal((await databaseRequests()).filter(([, reply]) => reply.status !== 200).length, 0, `warm round ${i}`);
  const hungAt = performance.now();
  await proxy.swallow();
  // the first requests land on pooled connections that went silent: the client-side deadline
  // answers for them (3 s for the lookups, 4 s here for the data query), plus the connect timeout
  // for a request that then waits for a new connection
  const first = await databaseRequests();
  checkUnavailable(t, first, QUERY_DEADLINE_MS + 3000 + 1500);
  t.comment(`first 503s after ${first.map(([name, reply]) => `${name} ${Math.round(reply.ms)} ms`).join(', ')}`);
  t.comment(`time to the first 503: ${Math.round(Math.min(...first.map(([, reply]) => reply.ms)))} ms`);
  const ready = await send(base, '/readyz', { timeoutMs: 15_000 });
  t.equal(ready.status, 503, `/readyz: 503 in ${Math.round(ready.ms)} ms`);
  t.ok(ready.ms < 3000 + 3000 + 1000, '/readyz answers within its lookup deadline and a connect timeout');
  // a while of it: still 503s within the deadline, no 500, connections and memory bounded
  for (let round = 0; round < 3; round++) checkUnavailable(t, await databaseRequests(), QUERY_DEADLINE_MS + 3000 + 1500);
  t.ok(proxy.openSockets <= 120, `open sockets at the proxy stay bounded (${proxy.openSockets})`);
  const metrics = await send(base, '/metrics');
  const rssMb = metricSum(metrics.body, 'process_resident_memory_bytes') / 2 ** 20;
  t.ok(rssMb > 0 && rssMb < 2 * 512, `resident memory of the cluster bounded (${Math.round(rssMb)} MB)`);
  t.same(cluster.workerPids().sort(), workers.sort(), 'the same workers are alive');
  t.notMatch(cluster.output(), /died/, 'no worker died');
  t.notMatch(cluster.output(), /"statusCode":500|internal_error/, 'no request answered 500');
  t.comment(`hung for ${Math.round(performance.now() - hungAt)} ms`);
  await recovery(t);
});

t.test('database closed for maintenance (ALLOW_CONNECTIONS false, sessions ended): 503, then recovery', async (t) => {
  const database = new URL(world.databaseUrl).pathname.slice(1);
  const allow = (allowed: boolean) => withAdmin((client) => client.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS ${allowed}`));
  await allow(false);
  try {
    await withAdmin((client) =>
      client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]),
    );
    // PostgreSQL refuses with 55000 "database ... is not currently accepting connections"
    checkUnavailable(t, await databaseRequests(), 4000);
    t.equal((await send(base, '/readyz')).status, 503, '/readyz: 503');
  } finally {
    await allow(true);
  }
  await recovery(t);
});
