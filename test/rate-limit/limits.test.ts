// The spec's rate limits, in process against the shared Redis store: the headers (Reset as a
// Unix timestamp), the 429 shape, exact counts under concurrency, and each scope's identity.
import { randomInt, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import t from 'tap';
import { createTestApp } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { proxyInFrontOf } from '../helpers/tcp-proxy.js';
import { issueToken } from '../helpers/tokens.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ctx = await createTestApp(t, { REDIS_URL }, { realRateLimits: true });
// a second app (another "process") on the same database and Redis, with its own caches
const twin = await createTestApp(t, { REDIS_URL }, { realRateLimits: true, database: ctx.db });
const acme = await createCompany(ctx.db.pool, 'Acme');
const other = await createCompany(ctx.db.pool, 'Other');
const dataUrl = '/api/v1/analytics/utilization?page_size=1';
// keys by IP live in the shared Redis: each test takes an address nobody else uses
const freshIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
const getData = (headers: Record<string, string>, url: string, remoteAddress: string) =>
  ctx.app.inject({ method: 'GET', url, headers, remoteAddress });

t.test('every data response carries the limit headers; Reset is a Unix timestamp', async (t) => {
  const { headers } = await issueToken(ctx, acme.employeeId);
  const before = Math.floor(Date.now() / 1000);
  const ok = await ctx.app.inject({ method: 'GET', url: dataUrl, headers });
  // the window opens when the request reaches Redis, somewhere between these two instants (over a
  // second apart on a loaded CI machine, which once put Reset at before + 62)
  const after = Math.ceil(Date.now() / 1000);
  t.equal(ok.statusCode, 200);
  t.equal(ok.headers['x-ratelimit-limit'], '100');
  t.equal(ok.headers['x-ratelimit-remaining'], '99');
  const reset = Number(ok.headers['x-ratelimit-reset']);
  t.ok(reset >= before + 59 && reset <= after + 61, `reset ${reset} is a minute after the request (${before}..${after})`);

  const notFound = await ctx.app.inject({ method: 'GET', url: `${dataUrl}&cooling_unit_id=${other.unitIds[0]}`, headers });
  t.equal(notFound.statusCode, 404, 'a unit of another company');
  t.equal(notFound.headers['x-ratelimit-remaining'], '98', 'a 4xx counts and carries the headers too');
  t.equal(notFound.headers['x-ratelimit-reset'], String(reset), 'same window');
});

t.test("a window ends on a whole second, and every response names it, however late Redis's reply arrives", async (t) => {
  // a third "process" reaches the same Redis through a link that holds every reply back 200 ms
  // (well inside the 500 ms command timeout, past which the process would count on its own):
  // Reset must not move with the delay (it once did: Date.now() + a TTL Redis measured earlier)
  const { proxy, url: slowUrl } = await proxyInFrontOf(t, REDIS_URL, 6379);
  const slow = await createTestApp(t, { REDIS_URL: slowUrl }, { realRateLimits: true, database: ctx.db });
  const redis = new Redis(REDIS_URL);
  t.teardown(() => redis.quit());

  const { id, headers } = await issueToken(ctx, acme.employeeId);
  const first = await ctx.app.inject({ method: 'GET', url: dataUrl, headers });
  const reset = Number(first.headers['x-ratelimit-reset']);
  const key = `coldtrack-test-${ctx.db.name}:rl:analytics_api_token:${id}`;
  t.equal(await redis.get(key), '1', "the window is counted under the token's id");
  t.equal(await redis.pexpiretime(key), reset * 1000, "Reset is the instant the window's key expires, a whole second");

  proxy.replyDelayMs = 200;
  for (let i = 0; i < 3; i++) {
    const late = await slow.app.inject({ method: 'GET', url: dataUrl, headers });
    t.equal(late.statusCode, 200);
    t.equal(late.headers['x-ratelimit-remaining'], String(98 - i), 'counted in the same window');
    t.equal(late.headers['x-ratelimit-reset'], String(reset), 'a reply 200 ms late names the same Reset');
  }
});

t.test('110 concurrent requests on one fresh token across two processes: exactly 100 pass', async (t) => {
  const { headers } = await issueToken(ctx, acme.employeeId);
  const responses = await Promise.all(
    Array.from({ length: 110 }, (_, i) => (i % 2 ? ctx : twin).app.inject({ method: 'GET', url: dataUrl, headers })),
  );
  const statuses = responses.map((response) => response.statusCode);
  t.equal(statuses.filter((status) => status === 200).length, 100);
  t.equal(statuses.filter((status) => status === 429).length, 10);
  const refused = responses.find((response) => response.statusCode === 429)!;
  t.match(refused.json(), { error: { code: 'rate_limited', message: /100/ } });
  const retryAfter = Number(refused.headers['retry-after']);
  t.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter} in seconds`);
  t.equal(refused.headers['x-ratelimit-remaining'], '0');
  t.ok(Number(refused.headers['x-ratelimit-reset']) > Date.now() / 1000);
});

t.test('the analytics limit is per token: another token of the same company is untouched', async (t) => {
  const first = await issueToken(ctx, acme.employeeId);
  const second = await issueToken(ctx, acme.employeeId);
  await Promise.all(Array.from({ length: 101 }, () => ctx.app.inject({ method: 'GET', url: dataUrl, headers: first.headers })));
  t.equal((await ctx.app.inject({ method: 'GET', url: dataUrl, headers: first.headers })).statusCode, 429);
  const fresh = await ctx.app.inject({ method: 'GET', url: dataUrl, headers: second.headers });
  t.equal(fresh.statusCode, 200);
  t.equal(fresh.headers['x-ratelimit-remaining'], '99');
});

t.test("refused requests count too: against the header's token, else the caller's IP", async (t) => {
  const { token, headers } = await issueToken(ctx, acme.employeeId);
  const ip = freshIp();
  const remaining = (response: { headers: Record<string, unknown> }) => Number(response.headers['x-ratelimit-remaining']);
  const first = await getData(headers, dataUrl, ip);
  t.equal(first.headers['x-ratelimit-limit'], '100', "the token's limit");
  const inQuery = await getData(headers, `${dataUrl}&token=${token}`, ip);
  t.equal(inQuery.statusCode, 400, 'a token in the query string: 400');
  t.equal(inQuery.headers['x-ratelimit-limit'], '100', "with the header token's rate-limit headers");
  t.equal(remaining(inQuery), remaining(first) - 1, 'and counted against it');
  const withBody = await ctx.app.inject({
    method: 'GET',
    url: dataUrl,
    headers: { ...headers, 'content-type': 'application/json' },
    payload: { x: 1 },
    remoteAddress: ip,
  });
  t.equal(withBody.statusCode, 400, 'a body: 400');
  t.equal(withBody.json().error.details.field, 'body');
  t.equal(remaining(withBody), remaining(first) - 2, 'counted against the token');

  const anonymous = await getData({}, `${dataUrl}&api_token=${token}`, ip);
  t.equal(anonymous.statusCode, 400, 'no header, a token in the query string: still 400, not 401');
  t.equal(anonymous.json().error.details.field, 'api_token');
  t.equal(anonymous.headers['x-ratelimit-limit'], '120', "counted against the caller's IP (public_read)");
  const again = await getData({ authorization: 'Bearer not-a-token' }, `${dataUrl}&access_token=x`, ip);
  t.equal(again.statusCode, 400);
  t.equal(remaining(again), remaining(anonymous) - 1, 'each such request is counted');
});

t.test('public_write: 20 unauthenticated POSTs a minute per client IP', async (t) => {
  const ip = freshIp();
  const post = (remoteAddress: string) =>
    ctx.app.inject({
      method: 'POST',
      url: '/api/v1/api-tokens',
      remoteAddress,
      headers: { 'content-type': 'application/json' },
      payload: {},
    });
  const statuses = [];
  for (let i = 0; i < 21; i++) statuses.push((await post(ip)).statusCode);
  t.same(statuses.slice(0, 20), Array(20).fill(401), 'the first 20 are answered (401: no credentials)');
  t.equal(statuses[20], 429, 'the 21st is limited');
  t.equal((await post(freshIp())).statusCode, 401, 'another IP has its own budget');
});

t.test('public_read: 120 unauthenticated GETs a minute per IP, bad tokens included', async (t) => {
  const ip = freshIp();
  const results = await Promise.all(
    Array.from({ length: 121 }, () =>
      ctx.app.inject({ method: 'GET', url: dataUrl, remoteAddress: ip, headers: { authorization: 'Bearer ctk_guess' } }),
    ),
  );
  const statuses = results.map((response) => response.statusCode);
  t.equal(statuses.filter((status) => status === 401).length, 120);
  t.equal(statuses.filter((status) => status === 429).length, 1);
});

t.test('authenticated_write: 120 POSTs a minute per user, whatever the IP', async (t) => {
  const fresh = await createCompany(ctx.db.pool, 'Fresh'); // an employee who has spent nothing yet
  const jwt = await ctx.jwtFor(fresh.employeeId);
  const revoke = (remoteAddress: string) =>
    ctx.app.inject({
      method: 'POST',
      url: `/api/v1/api-tokens/${randomUUID()}/revoke`,
      remoteAddress,
      headers: { authorization: `Bearer ${jwt}` },
    });
  const statuses = await Promise.all(Array.from({ length: 121 }, () => revoke(freshIp())).map(async (r) => (await r).statusCode));
  t.equal(statuses.filter((status) => status === 404).length, 120);
  t.equal(statuses.filter((status) => status === 429).length, 1);
  const otherUser = await ctx.app.inject({
    method: 'POST',
    url: `/api/v1/api-tokens/${randomUUID()}/revoke`,
    headers: { authorization: `Bearer ${await ctx.jwtFor(other.employeeId)}` },
  });
  t.equal(otherUser.statusCode, 404, 'another user is not limited');
});

t.test('authenticated_read: 600 GETs a minute per user', async (t) => {
  const jwt = await ctx.jwtFor(other.employeeId);
  // 40 at a time, not all 601: each admitted request reads the database through a pool of 10, and
  // on a busy machine the last of 601 at once waited past the 3 s lookup deadline (503)
  const read = async () =>
    (await ctx.app.inject({ method: 'GET', url: '/api/v1/api-tokens?page_size=1', headers: { authorization: `Bearer ${jwt}` } }))
      .statusCode;
  const statuses: number[] = [];
  for (let sent = 0; sent < 601; sent += 40) statuses.push(...(await Promise.all(Array.from({ length: Math.min(40, 601 - sent) }, read))));
  const counts = Object.fromEntries([...new Set(statuses)].map((status) => [status, statuses.filter((each) => each === status).length]));
  t.same(counts, { 200: 600, 429: 1 }, '600 admitted, the 601st refused');
});

t.test('operations endpoints are outside the limits', async (t) => {
  const ip = freshIp();
  const statuses = await Promise.all(
    Array.from({ length: 130 }, async () => (await ctx.app.inject({ method: 'GET', url: '/healthz', remoteAddress: ip })).statusCode),
  );
  t.ok(statuses.every((status) => status === 200));
});
