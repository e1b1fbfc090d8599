// The spec's limits on the real cluster (2 workers, a Redis of this file's own): exact across
// workers, the headers, and each scope's identity (IP through the trusted proxy, user, token).
import t from 'tap';
import { createWorld, DATA_PATH, type Reply, send, startCluster, startRedis, statusCounts, until } from './harness.js';

const world = await createWorld(t);
const redis = await startRedis(t);
const cluster = await startCluster(t, { DATABASE_URL: world.databaseUrl, REDIS_URL: redis.url, TRUST_PROXY: '127.0.0.1' });
const base = cluster.baseUrl;

/** n requests at once, each on its own connection (the primary deals connections round-robin). */
function burst(n: number, path: string, options: (i: number) => Parameters<typeof send>[2]): Promise<Reply[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => send(base, path, options(i))));
}

t.test('110 concurrent requests on one fresh token, over both workers: exactly 100 pass', async (t) => {
  const { headers } = await world.issue();
  const before = Math.floor(Date.now() / 1000);
  const replies = await burst(110, DATA_PATH, (i) => ({ headers: { ...headers, 'x-request-id': `exact-${i}` } }));
  const after = Math.ceil(Date.now() / 1000);
  const counts = statusCounts(replies);
  t.comment(`admitted ${counts[200] ?? 0}, refused ${counts[429] ?? 0} of 110`);
  t.same(counts, { 200: 100, 429: 10 });

  const admitted = replies.filter((reply) => reply.status === 200);
  t.ok(
    admitted.every((reply) => reply.headers['x-ratelimit-limit'] === '100'),
    'X-RateLimit-Limit 100 on every 200',
  );
  const remaining = admitted.map((reply) => Number(reply.headers['x-ratelimit-remaining'])).sort((a, b) => a - b);
  t.same(
    remaining,
    Array.from({ length: 100 }, (_, i) => i),
    'Remaining counts down 99..0, each value once: one shared counter',
  );
  const resets = new Set(replies.map((reply) => Number(reply.headers['x-ratelimit-reset'])));
  // the window opens with the first request to reach Redis: somewhere between before and after
  for (const reset of resets)
    t.ok(
      reset >= before + 59 && reset <= after + 61,
      `X-RateLimit-Reset ${reset} is a Unix timestamp a minute after the burst (${before}..${after})`,
    );
  t.ok(resets.size <= 2, 'one window (rounding may straddle a second)');

  const refused = replies.find((reply) => reply.status === 429)!;
  t.match(refused.json(), { error: { code: 'rate_limited' } });
  t.equal(refused.headers['x-ratelimit-remaining'], '0');
  const retryAfter = Number(refused.headers['retry-after']);
  t.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);

  const pids = await until(
    'every request in the logs',
    () => {
      const found = replies.map((_, i) => cluster.pidOfRequest(`exact-${i}`));
      return found.every((pid) => pid !== undefined) && new Set(found);
    },
    5000,
  );
  t.equal(pids.size, 2, `both workers served (${[...pids].join(', ')})`);
});

t.test('the analytics limit is per token: another token is untouched by an exhausted one', async (t) => {
  const first = await world.issue();
  const second = await world.issue();
  const spent = await burst(101, DATA_PATH, () => ({ headers: first.headers }));
  t.same(statusCounts(spent), { 200: 100, 429: 1 });
  const fresh = await send(base, DATA_PATH, { headers: second.headers });
  t.equal(fresh.status, 200);
  t.equal(fresh.headers['x-ratelimit-remaining'], '99');
});

t.test('public_write is per client IP through the trusted proxy: 20 a minute each', async (t) => {
  // an unauthenticated unsafe request: a token creation without a valid JWT (401, counted by IP)
  const from = (ip: string) => () => ({ method: 'POST', headers: { 'x-forwarded-for': ip, authorization: 'Bearer nope' }, body: {} });
  const first = await burst(25, '/api/v1/api-tokens', from('203.0.113.7'));
  t.same(statusCounts(first), { 401: 20, 429: 5 }, 'first IP: 20 pass, 5 refused');
  const second = await burst(20, '/api/v1/api-tokens', from('203.0.113.8'));
  t.same(statusCounts(second), { 401: 20 }, 'second IP: its own 20');
  t.equal((await send(base, '/api/v1/api-tokens', from('203.0.113.8')())).status, 429, "and the second IP's 21st is refused");
  const refused = first.find((reply) => reply.status === 429)!;
  t.equal(refused.headers['x-ratelimit-limit'], '20');
  t.match(refused.json(), { error: { code: 'rate_limited', details: { scope: 'public_write' } } });
});

t.test('authenticated_write is per user: 120 a minute each', async (t) => {
  const [acmeJwt, otherJwt] = await Promise.all([world.jwt(world.acme.employeeId), world.jwt(world.other.employeeId)]);
  // an invalid body: counted by the auth hook (before parsing), answered 400, creates nothing
  const as = (jwt: string) => () => ({ method: 'POST', headers: { authorization: `Bearer ${jwt}` }, body: {} });
  const first = await burst(125, '/api/v1/api-tokens', as(acmeJwt));
  t.same(statusCounts(first), { 400: 120, 429: 5 }, 'first user: 120 pass');
  const second = await send(base, '/api/v1/api-tokens', as(otherJwt)());
  t.equal(second.status, 400, 'second user is untouched');
  t.equal(second.headers['x-ratelimit-remaining'], '119');
  // reads are their own scope (600): the first user can still list
  const read = await send(base, '/api/v1/api-tokens', { headers: { authorization: `Bearer ${acmeJwt}` } });
  t.equal(read.status, 200);
  t.equal(read.headers['x-ratelimit-limit'], '600');
});

t.test('validate-cooling-user-id: 30 a minute per client IP', async (t) => {
  const from = (ip: string) => () => ({ method: 'POST', headers: { 'x-forwarded-for': ip }, body: { cooling_user_id: 'x' } });
  const first = await burst(31, '/v1/users/validate-cooling-user-id/', from('198.51.100.1'));
  t.same(statusCounts(first), { 200: 30, 429: 1 }, '31st request from one IP is refused');
  const refused = first.find((reply) => reply.status === 429);
  t.match(refused?.json(), { error: { code: 'rate_limited', details: { scope: 'validate_cooling_user_id_ip' } } });
  const other = await send(base, '/v1/users/validate-cooling-user-id/', from('198.51.100.2')());
  t.equal(other.status, 200, 'another IP is untouched');
  t.equal(other.headers['x-ratelimit-limit'], '30');
});
