// Redis dies under the real cluster: data endpoints keep serving on the per-process fallback
// (the limit divided by the worker count), quickly; the fallback is counted and logged once per
// worker; /readyz says so. Redis returns on the same port: limits are shared again, exactly.
import t from 'tap';
import { REDIS_COMMAND_TIMEOUT_MS } from '../../src/redis/connection.js';
import { createWorld, DATA_PATH, metricSum, type Reply, send, startCluster, startRedis, statusCounts, until } from './harness.js';

const WORKERS = 2;
const world = await createWorld(t);
const redis = await startRedis(t);
const cluster = await startCluster(t, { DATABASE_URL: world.databaseUrl, REDIS_URL: redis.url }, { workers: WORKERS });
const base = cluster.baseUrl;
const FALLBACK_LOG = 'Redis unavailable: rate limits fall back to per-process counting';
/** "Nothing waits long": 1 s, or no slower than the same burst with Redis up when the machine is that busy. */
let latencyBound = 1000;

let burstCount = 0;
/** n concurrent data requests with one token, each on its own connection, tagged for the logs. */
async function burst(n: number, headers: Record<string, string>) {
  const tag = `burst-${burstCount++}`;
  const replies = await Promise.all(
    Array.from({ length: n }, (_, i) => send(base, DATA_PATH, { headers: { ...headers, 'x-request-id': `${tag}-${i}` }, timeoutMs: 5000 })),
  );
  const pids = await until(
    'the burst in the logs',
    () => {
      const found = replies.map((_, i) => cluster.pidOfRequest(`${tag}-${i}`));
      return found.every((pid) => pid !== undefined) && (found as number[]);
    },
    5000,
  );
  return replies.map((reply, i) => ({ reply, pid: pids[i]! }));
}

/** True when 4 sequential requests with a fresh token count down 99, 98, 97, 96: one shared counter. */
async function sharedAgain(headers: Record<string, string>): Promise<boolean> {
  const remaining: string[] = [];
  for (let i = 0; i < 4; i++) {
    const reply = await send(base, DATA_PATH, { headers, timeoutMs: 5000 });
    remaining.push(String(reply.headers['x-ratelimit-remaining']));
  }
  return remaining.join() === '99,98,97,96';
}

t.test('Redis outage and return', async (t) => {
  const ready = await send(base, '/readyz');
  t.equal(ready.status, 200);
  t.same(ready.json().checks, { database: 'ok', redis: 'ok' }, '/readyz checks Redis when it is configured');

  // warm (database connections, JIT), then the latency of the same burst with Redis up
  await burst(20, (await world.issue()).headers);
  const baseline = await burst(110, (await world.issue()).headers);
  const baselineSlowest = Math.max(...baseline.map(({ reply }) => reply.ms));
  t.comment(`Redis up: slowest of 110 concurrent requests ${Math.round(baselineSlowest)} ms`);
  // on a starved machine the command timeout can trip already: count from here
  const fallbacksBefore = metricSum((await send(base, '/metrics')).body, 'rate_limit_redis_fallbacks_total');
  const logsBefore = cluster.logs().length;

  await redis.kill();
  const during = await world.issue();
  const first = await burst(110, during.headers);
  const second = await burst(20, during.headers);
  const all = [...first, ...second];
  const slowest = Math.max(...all.map(({ reply }) => reply.ms));
  t.comment(
    `Redis down: ${JSON.stringify(statusCounts(first.map(({ reply }) => reply)))} of 110; slowest request ${Math.round(slowest)} ms`,
  );
  latencyBound = Math.max(1000, baselineSlowest * 1.5);
  t.ok(slowest < latencyBound, `no request waited long (slowest ${Math.round(slowest)} ms, bound ${Math.round(latencyBound)} ms)`);
  t.ok(
    all.every(({ reply }) => reply.status === 200 || reply.status === 429),
    'every answer is a 200 or a 429 (no 5xx)',
  );
  const admittedBy = new Map<number, number>();
  for (const { reply, pid } of all) if (reply.status === 200) admittedBy.set(pid, (admittedBy.get(pid) ?? 0) + 1);
  t.comment(`admitted per worker: ${JSON.stringify(Object.fromEntries(admittedBy))}`);
  t.ok(admittedBy.size >= 1, 'data endpoints keep serving');
  for (const [pid, admitted] of admittedBy)
    t.ok(admitted <= 100 / WORKERS, `worker ${pid} admitted ${admitted}, at most the limit / workers (${100 / WORKERS})`);
  const total = [...admittedBy.values()].reduce((sum, n) => sum + n, 0);
  t.ok(total <= 100, `no more than the limit across the cluster (${total})`);
  const degraded: Reply = all.find(({ reply }) => reply.status === 200)!.reply;
  t.equal(degraded.headers['x-ratelimit-limit'], '100', 'headers still carry the limit');

  const notReady = await send(base, '/readyz');
  t.equal(notReady.status, 503, '/readyz: 503 while Redis is away');
  t.same(notReady.json().checks, { database: 'ok', redis: 'unreachable' });
  t.ok(notReady.ms < 1000, `/readyz answered in ${Math.round(notReady.ms)} ms`);

  const metrics = await send(base, '/metrics');
  const fallbacks = metricSum(metrics.body, 'rate_limit_redis_fallbacks_total') - fallbacksBefore;
  t.ok(fallbacks >= 1 && fallbacks <= WORKERS, `rate_limit_redis_fallbacks_total rose by ${fallbacks}: once per worker that fell back`);
  const logged = cluster
    .logs()
    .slice(logsBefore)
    .filter((line) => line.msg === FALLBACK_LOG);
  t.ok(
    logged.length >= 1 && logged.length <= WORKERS,
    `the fallback was logged ${logged.length} time(s): once per worker, not per request`,
  );
  t.equal(new Set(logged.map((line) => line.pid)).size, logged.length, 'never twice by one worker');

  // Redis returns, empty, on the same port
  await redis.start();
  const returnedAt = performance.now();
  let probes = 0;
  // each probe takes a fresh token (a fresh counter), issued in process: no Redis involved
  await until('limits shared again', async () => (probes++, sharedAgain((await world.issue()).headers)), 15_000, 100);
  const recoveryMs = performance.now() - returnedAt;
  t.comment(`limits shared again ${Math.round(recoveryMs)} ms after Redis returned (${probes} probes)`);
  t.ok(recoveryMs < 10_000, 'recovered by itself, promptly');
  t.equal(await until('/readyz ready again', async () => (await send(base, '/readyz')).status === 200 || undefined, 5000, 100), true);
  // "back" once Redis has answered for a while (src/redis/outage.ts), not at its first answer
  const backLines = () => cluster.logs().filter((line) => line.msg === 'Redis is back: rate limits are shared again');
  await until('the recovery logged', () => backLines().length > 0, 10_000, 100).catch(() => {});
  const back = backLines();
  t.ok(back.length >= 1 && back.length <= WORKERS, `the recovery was logged ${back.length} time(s)`);
  t.equal(new Set(back.map((line) => line.pid)).size, back.length, 'never twice by one worker');

  const after = await world.issue();
  const exact = await burst(110, after.headers);
  t.same(statusCounts(exact.map(({ reply }) => reply)), { 200: 100, 429: 10 }, 'a fresh token gets exactly 100 again');
  t.equal(new Set(exact.map(({ pid }) => pid)).size, WORKERS, 'over both workers');
  t.notMatch(cluster.output(), /died/, 'no worker crashed');
});

t.test('Redis hangs (SIGSTOP): requests still answered within the short command timeout', async (t) => {
  const token = await world.issue();
  t.equal((await send(base, DATA_PATH, { headers: token.headers })).status, 200, 'warm');
  redis.pause();
  try {
    const replies = await burst(20, token.headers);
    const slowest = Math.max(...replies.map(({ reply }) => reply.ms));
    // a hung Redis costs a request a command timeout or two (revocation check and rate limit may
    // wait in turn), never more
    const hungBound = Math.max(latencyBound, 2 * REDIS_COMMAND_TIMEOUT_MS + 1000);
    t.comment(`Redis hung: ${JSON.stringify(statusCounts(replies.map(({ reply }) => reply)))}; slowest ${Math.round(slowest)} ms`);
    t.ok(
      replies.every(({ reply }) => reply.status === 200),
      'data endpoints keep serving',
    );
    t.ok(slowest < hungBound, `no request waited long (slowest ${Math.round(slowest)} ms, bound ${Math.round(hungBound)} ms)`);
    const notReady = await send(base, '/readyz');
    t.equal(notReady.status, 503, `/readyz: 503 in ${Math.round(notReady.ms)} ms`);
    t.ok(notReady.ms < REDIS_COMMAND_TIMEOUT_MS + 1000, '/readyz answered promptly');
  } finally {
    redis.resume();
  }
  await until('/readyz ready again', async () => (await send(base, '/readyz')).status === 200 || undefined, 10_000, 100);
  t.ok(await until('limits shared again', async () => sharedAgain((await world.issue()).headers), 10_000, 100));
  t.notMatch(cluster.output(), /died/, 'no worker crashed');
});
