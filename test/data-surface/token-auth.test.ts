// API-token authentication on the data surface: expiry to the second, revocation everywhere at
// once (including another process), last_used_at written behind, and tokens kept out of URLs.
import t from 'tap';
import { createTestApp, TEST_JWT_SECRET } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { startServerProcess } from '../helpers/server-process.js';
import { issueToken } from '../helpers/tokens.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const ctx = await createTestApp(t, { REDIS_URL });
const acme = await createCompany(ctx.db.pool, 'Acme');
const url = '/api/v1/analytics/utilization?page_size=1';
const get = (headers: Record<string, string>, path = url) => ctx.app.inject({ method: 'GET', url: path, headers });

t.test('a token stops working at expires_at, to the second', async (t) => {
  const expiresAt = new Date(Math.ceil((ctx.clock.now().getTime() + 60_000) / 1000) * 1000);
  const { headers } = await issueToken(ctx, acme.employeeId, { expires_at: expiresAt.toISOString() });
  ctx.clock.set(new Date(expiresAt.getTime() - 1));
  t.equal((await get(headers)).statusCode, 200, 'works 1 ms before');
  ctx.clock.set(expiresAt);
  const expired = await get(headers);
  t.equal(expired.statusCode, 401, 'refused at the instant');
  t.match(expired.json(), { error: { code: 'unauthorized', message: /expired/ } });
  t.match(expired.headers['www-authenticate'], /^Bearer /);
  ctx.clock.set(new Date());
});

t.test('revocation takes effect in this process at once, cache warm or not', async (t) => {
  const { id, headers } = await issueToken(ctx, acme.employeeId);
  t.equal((await get(headers)).statusCode, 200, 'warm in the cache');
  const revoke = await ctx.app.inject({
    method: 'POST',
    url: `/api/v1/api-tokens/${id}/revoke`,
    headers: { authorization: `Bearer ${await ctx.jwtFor(acme.employeeId)}` },
  });
  t.equal(revoke.statusCode, 200);
  const refused = await get(headers);
  t.equal(refused.statusCode, 401);
  t.match(refused.json(), { error: { code: 'unauthorized', message: /revoked/ } });
});

t.test('revocation is seen by another process right after the revoke call returns', async (t) => {
  const other = await startServerProcess(t, {
    DATABASE_URL: ctx.db.url,
    REDIS_URL,
    JWT_SECRET: TEST_JWT_SECRET,
    REDIS_KEY_PREFIX: ctx.config.redisKeyPrefix, // the same deployment as this process
  });
  for (let round = 0; round < 10; round++) {
    const { id, token } = await issueToken(ctx, acme.employeeId);
    const headers = { authorization: `Bearer ${token}` };
    const warm = await fetch(other.baseUrl + url, { headers });
    t.equal(warm.status, 200, `round ${round}: the other process accepts (and caches) the token`);
    const revoke = await ctx.app.inject({
      method: 'POST',
      url: `/api/v1/api-tokens/${id}/revoke`,
      headers: { authorization: `Bearer ${await ctx.jwtFor(acme.employeeId)}` },
    });
    t.equal(revoke.statusCode, 200);
    const after = await fetch(other.baseUrl + url, { headers });
    t.equal(after.status, 401, `round ${round}: refused by the other process immediately`);
  }
  t.notMatch(other.output(), /ctk_[0-9A-Za-z]{20}/, 'the other process never logged a token');
});

t.test('last_used_at is written behind: not per request, flushed in one go and on close', async (t) => {
  const { id, headers } = await issueToken(ctx, acme.employeeId);
  const lastUsed = async () =>
    (await ctx.db.pool.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM api_tokens WHERE id = $1', [id])).rows[0]!
      .last_used_at;
  const usedAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 5000);
  ctx.clock.set(usedAt);
  for (let i = 0; i < 5; i++) t.equal((await get(headers)).statusCode, 200);
  t.equal(await lastUsed(), null, 'nothing written on the request path');
  await ctx.app.lastUsed.flush();
  t.same((await lastUsed())?.toISOString(), usedAt.toISOString(), 'flushed with the time of use');
  ctx.clock.set(new Date());
});

t.test('tokens outside the Authorization header are refused and never logged', async (t) => {
  const { token, headers } = await issueToken(ctx, acme.employeeId);
  for (const name of ['token', 'api_token', 'access_token']) {
    const response = await get(headers, `${url}&${name}=${token}`);
    t.equal(response.statusCode, 400, name);
    t.equal(response.json().error.details.field, name);
  }
  const bodyToken = await ctx.app.inject({
    method: 'GET',
    url,
    headers: { ...headers, 'content-type': 'application/json' },
    payload: { token },
  });
  t.equal(bodyToken.statusCode, 400);
  t.equal(bodyToken.json().error.details.field, 'token');
  t.notOk(ctx.logs.join('\n').includes(token), 'the raw token is in no log line');
});

t.test('malformed, unknown and wrongly sent credentials are 401 with WWW-Authenticate', async (t) => {
  const { token } = await issueToken(ctx, acme.employeeId);
  const flipped = token.slice(0, 10) + (token[10] === 'a' ? 'b' : 'a') + token.slice(11);
  const cases: Array<[string, Record<string, string>]> = [
    ['missing', {}],
    ['basic scheme', { authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}` }],
    ['checksum mismatch', { authorization: `Bearer ${flipped}` }],
    ['garbage', { authorization: 'Bearer not-a-token' }],
    ['a JWT instead of a token', { authorization: `Bearer ${await ctx.jwtFor(acme.employeeId)}` }],
  ];
  for (const [label, headers] of cases) {
    const response = await get(headers);
    t.equal(response.statusCode, 401, label);
    t.equal(response.json().error.code, 'unauthorized', label);
    t.match(response.headers['www-authenticate'], /^Bearer realm=/, label);
  }
  t.equal((await get({ authorization: `bearer ${token}` })).statusCode, 200, 'the scheme is case-insensitive');
});
