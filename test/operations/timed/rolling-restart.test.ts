// SIGHUP under load: the primary replaces every worker, one by one, and not one request fails
// (no non-2xx, no socket error, no timeout), kept-alive connections included.
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { createWorld, send, startCluster, startRedis, until } from '../harness.js';

// the part of autocannon's API used here (it ships no type declarations)
interface LoadRequest {
  method: 'GET';
  path: string;
  headers?: Record<string, string>;
}
interface LoadResult {
  requests: { total: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  resets: number;
  statusCodeStats: Record<string, { count: number }>;
}
interface LoadInstance {
  stop(): void;
}
type Autocannon = (
  options: { url: string; connections: number; duration: number; overallRate?: number; timeout?: number; requests: LoadRequest[] },
  done: (error: Error | null, result: LoadResult) => void,
) => LoadInstance;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

function load(options: Parameters<Autocannon>[0]): { instance: LoadInstance; result: Promise<LoadResult> } {
  let instance!: LoadInstance;
  const result = new Promise<LoadResult>((resolve, reject) => {
    instance = autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
  return { instance, result };
}

const EMPLOYEES = 10;

const world = await createWorld(t);
const redis = await startRedis(t);
const cluster = await startCluster(t, { DATABASE_URL: world.databaseUrl, REDIS_URL: redis.url });

t.test('SIGHUP under load: zero failed requests, every worker replaced', async (t) => {
  // several employees: the management reads are limited per user (600 a minute each)
  const { rows } = await world.ctx.db.pool.query<{ id: number }>(
    `INSERT INTO users (role, company_id, first_name, is_active)
     SELECT 'REGISTERED_EMPLOYEE', $1, 'Loader ' || n, true FROM generate_series(1, $2) AS n RETURNING id`,
    [world.acme.companyId, EMPLOYEES],
  );
  const jwts = await Promise.all(rows.map((row) => world.jwt(row.id)));
  const before = await until(
    'two workers',
    () => {
      const pids = cluster.workerPids();
      return pids.length === 2 && pids;
    },
    5000,
  );

  // a capped rate on the limited endpoint (well under 10 x 600 a minute), and /readyz (outside the
  // limits, one database round trip) as fast as it goes; both on kept-alive connections
  const managed = load({
    url: cluster.baseUrl,
    connections: 4,
    duration: 20,
    overallRate: 60,
    timeout: 5,
    requests: jwts.map((jwt) => ({ method: 'GET', path: '/api/v1/api-tokens?page_size=5', headers: { authorization: `Bearer ${jwt}` } })),
  });
  const probes = load({ url: cluster.baseUrl, connections: 6, duration: 20, timeout: 5, requests: [{ method: 'GET', path: '/readyz' }] });

  await sleep(1000);
  const hupAt = performance.now();
  cluster.signal('SIGHUP');
  await until('the rolling restart to finish', () => cluster.output().includes('rolling restart done'), 30_000, 20);
  const restartMs = performance.now() - hupAt;
  await sleep(1000);
  managed.instance.stop();
  probes.instance.stop();
  const results = await Promise.all([managed.result, probes.result]);

  t.comment(`rolling restart took ${Math.round(restartMs)} ms`);
  for (const [name, result] of [
    ['management reads', results[0]],
    ['/readyz', results[1]],
  ] as const) {
    const failed = result.non2xx + result.errors + result.timeouts;
    t.comment(
      `${name}: ${result.requests.total} requests, ${failed} failed (non-2xx ${result.non2xx}, errors ${result.errors}, timeouts ${result.timeouts}, resets ${result.resets}); statuses ${JSON.stringify(result.statusCodeStats)}`,
    );
    t.ok(result.requests.total > 50, `${name}: load was applied`);
    t.equal(failed, 0, `${name}: no failed request during the rolling restart`);
  }

  const after = cluster.workerPids();
  t.equal(after.length, 2, 'two workers after the restart');
  t.same(
    after.filter((pid) => before.includes(pid)),
    [],
    `every worker was replaced (${before.join(', ')} -> ${after.join(', ')})`,
  );
  t.notMatch(cluster.output(), /died/, 'no worker counted as crashed');
  t.notMatch(cluster.output(), /killed by timeout/, 'the old workers drained within their deadline');
});

t.test('two SIGHUPs in a row roll the workers once: still exactly two workers', async (t) => {
  const before = cluster.workerPids();
  const done = () => cluster.output().split('rolling restart done').length - 1;
  const doneBefore = done();
  cluster.signal('SIGHUP');
  cluster.signal('SIGHUP');
  await until('the rolling restart to finish', () => done() > doneBefore, 20_000, 20);
  // a second, overlapping restart would fork a third and fourth worker: give it the time to show
  await sleep(2000);
  const after = cluster.workerPids();
  t.equal(after.length, 2, `two workers (${after.join(', ')})`);
  t.same(
    after.filter((pid) => before.includes(pid)),
    [],
    'both replaced',
  );
  t.equal((await send(cluster.baseUrl, '/readyz')).status, 200);
});
