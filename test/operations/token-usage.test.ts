// Usage per token on the real cluster (2 workers, a Redis of this file's own): what each worker
// counted in memory reaches the database only through its write-behind, here at the graceful stop
// (LAST_USED_FLUSH_SECONDS is an hour), and then equals exactly the requests sent, by route and
// answer class (2xx, 4xx, 429), whichever worker served them; the last client is the last request's,
// and last_used_at its time, a 429 included. Stopped by SIGTERM to the primary, and by a signal to
// the whole process group (a terminal's Ctrl-C, systemd's stop), which reaches each worker twice.
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { createWorld, send, startCluster, startRedis, statusCounts, until } from './harness.js';

const world = await createWorld(t);
const redis = await startRedis(t);
const cluster = await startCluster(t, {
  DATABASE_URL: world.databaseUrl,
  REDIS_URL: redis.url,
  TRUST_PROXY: '127.0.0.1',
  LAST_USED_FLUSH_SECONDS: '3600',
});
const token = await world.issue();
const UTILIZATION = '/api/v1/analytics/utilization?page_size=1';
const BAD_USERS = '/api/v1/analytics/users?period=fortnight';
const burst = (n: number, path: string, tag: string) =>
  Promise.all(
    Array.from({ length: n }, (_, i) => send(cluster.baseUrl, path, { headers: { ...token.headers, 'x-request-id': `${tag}-${i}` } })),
  );
const stored = async () =>
  (
    await world.ctx.db.pool.query<{ endpoint: string; class: string; requests: number }>(
      'SELECT endpoint, class, requests::int FROM api_token_usage WHERE api_token_id = $1 ORDER BY endpoint, class',
      [token.id],
    )
  ).rows;

t.test('requests over both workers, then a graceful stop: usage equals what was sent', async (t) => {
  const served = await burst(95, UTILIZATION, 'served');
  t.same(statusCounts(served), { 200: 95 });
  const pids = await until(
    'the requests in the logs',
    () => {
      const found = served.map((_, i) => cluster.pidOfRequest(`served-${i}`));
      return found.every((pid) => pid !== undefined) && new Set(found);
    },
    8000,
  );
  t.equal(pids.size, 2, `both workers served (${[...pids].join(', ')})`);
  t.same(statusCounts(await burst(5, BAD_USERS, 'bad')), { 400: 5 });
  t.same(statusCounts(await burst(9, BAD_USERS, 'limited')), { 429: 9 }, 'past the limit: 429, counted against the token');
  // the last request, from a client of its own, well after every other one
  await sleep(1100);
  const lastSentAt = Date.now();
  const last = await send(cluster.baseUrl, UTILIZATION, {
    headers: { ...token.headers, 'user-agent': 'partner-etl/3.1', 'x-forwarded-for': '203.0.113.9' },
  });
  t.equal(last.status, 429);

  await sleep(300);
  t.same(await stored(), [], 'nothing written while serving: the counts wait for the flush');

  cluster.signal('SIGTERM');
  t.same((await cluster.exited).code, 0, 'stopped gracefully');
  t.same(await stored(), [
    { endpoint: '/api/v1/analytics/users', class: '429', requests: 9 },
    { endpoint: '/api/v1/analytics/users', class: '4xx', requests: 5 },
    { endpoint: '/api/v1/analytics/utilization', class: '2xx', requests: 95 },
    { endpoint: '/api/v1/analytics/utilization', class: '429', requests: 1 },
  ]);

  const response = await world.ctx.app.inject({
    method: 'GET',
    url: `/api/v1/api-tokens/${token.id}/usage`,
    headers: { authorization: `Bearer ${await world.jwt(world.acme.employeeId)}` },
  });
  t.equal(response.statusCode, 200, response.body);
  const body = response.json<{
    requests: number;
    by_class: Record<string, number>;
    last_used_at: string;
    last_ip: string;
    last_user_agent: string;
  }>();
  t.equal(body.requests, 110);
  t.same(body.by_class, { '2xx': 95, '304': 0, '4xx': 5, '429': 10, '5xx': 0 });
  t.equal(body.last_ip, '203.0.113.9', 'the client IP as TRUST_PROXY resolves it');
  t.equal(body.last_user_agent, 'partner-etl/3.1');
  t.ok(
    Date.parse(body.last_used_at) >= lastSentAt,
    `last_used_at ${body.last_used_at} is the last request's (a 429, sent at ${new Date(lastSentAt).toISOString()})`,
  );
});

t.test('a signal to the whole process group: each worker gets it and then the primary SIGTERM, and still flushes', async (t) => {
  const grouped = await startCluster(
    t,
    { DATABASE_URL: world.databaseUrl, REDIS_URL: redis.url, LAST_USED_FLUSH_SECONDS: '3600' },
    { detached: true },
  );
  const own = await world.issue();
  // kept-alive connections, as a partner's client holds them: open still when the signal comes
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  t.teardown(() => agent.destroy());
  const replies = [];
  for (let i = 0; i < 104; i++) replies.push(send(grouped.baseUrl, UTILIZATION, { headers: own.headers, agent }));
  t.same(statusCounts(await Promise.all(replies)), { 200: 100, 429: 4 }, 'answers 200, then 429 past the limit');
  await sleep(1100);
  const lastSentAt = Date.now();
  t.equal((await send(grouped.baseUrl, UTILIZATION, { headers: own.headers, agent })).status, 429, 'the last request: a 429');

  // each worker gets the group's SIGTERM and, a few ms later, the primary's: whether that lands
  // while the worker stops is a race, so the group gets a second one once the stop is under way
  grouped.signalGroup('SIGTERM');
  await sleep(150);
  grouped.signalGroup('SIGTERM');
  t.equal((await grouped.exited).code, 0, 'stopped');
  t.notMatch(grouped.output(), /second SIGTERM|killed by timeout/, 'no worker gave up its stop');
  t.match(grouped.output(), /already shutting down/, "a worker noted the primary's SIGTERM after the group's and went on");
  const rows = await world.ctx.db.pool.query<{ class: string; requests: number }>(
    'SELECT class, requests::int FROM api_token_usage WHERE api_token_id = $1 ORDER BY class',
    [own.id],
  );
  t.same(rows.rows, [
    { class: '2xx', requests: 100 },
    { class: '429', requests: 5 },
  ]);
  const { last_used_at: lastUsedAt } = (
    await world.ctx.db.pool.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM api_tokens WHERE id = $1', [own.id])
  ).rows[0]!;
  t.ok(lastUsedAt && lastUsedAt.getTime() >= lastSentAt, `last_used_at ${lastUsedAt?.toISOString()} is the last request's`);
});
