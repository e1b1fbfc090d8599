// POST /api/v1/api-tokens/{token_id}/rotate, security: only a Registered Employee of the token's
// company can rotate it (another company's token is 404, like an unknown one); a replacement never
// reads more than the old token did; the new secret is shown once and never logged; the old
// token's new expiry holds on every process of the deployment; the write rate limit applies.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';
import { BASE, createWorld, type ApiTokenJson, type CreatedToken, type ErrorJson } from './setup.js';

const world = await createWorld(t);
const { a, b } = world;
const aToken = await world.createToken(a.jwt, { name: 'A production', scopes: ['users', 'utilization'] });
const rowOf = async (id: string) =>
  (await world.db.pool.query('SELECT revoked, revoked_at, name, expires_at, token_hash FROM api_tokens WHERE id = $1', [id])).rows[0];
const original = await rowOf(aToken.id);
const data = (token: string, url = '/api/v1/analytics/users') =>
  world.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });

t.test('company B cannot rotate company A’s token: 404 like an unknown id, nothing created or changed', async (t) => {
  const count = await world.tokenCount();
  const foreign = await world.post(b.jwt, `${BASE}/${aToken.id}/rotate`, { grace_period_seconds: 0 });
  const unknown = await world.post(b.jwt, `${BASE}/${randomUUID()}/rotate`, { grace_period_seconds: 0 });
  t.equal(foreign.statusCode, 404);
  t.equal(foreign.json<ErrorJson>().error.code, 'not_found');
  t.equal(foreign.body, unknown.body, 'indistinguishable from a token that does not exist');
  t.notOk(foreign.body.includes(aToken.name));
  t.equal(await world.tokenCount(), count, 'no replacement');
  t.strictSame(await rowOf(aToken.id), original, 'row untouched');
  t.equal((await data(aToken.token)).statusCode, 200, 'A’s token keeps working');
});

t.test('401 and 403 callers rotate nothing', async (t) => {
  const count = await world.tokenCount();
  const cases: Array<[string, Record<string, string>, number]> = [
    ['no Authorization', {}, 401],
    ['garbage JWT', { authorization: 'Bearer x.y.z' }, 401],
    ['the API token itself', { authorization: `Bearer ${aToken.token}` }, 401],
    [
      'an expired JWT',
      { authorization: `Bearer ${await world.jwtFor(a.employeeId, { ttlSeconds: 60, now: new Date(Date.now() - 3_600_000) })}` },
      401,
    ],
    ['inactive employee', { authorization: `Bearer ${await world.jwtFor(a.inactiveEmployeeId)}` }, 401],
    ['operator', { authorization: `Bearer ${await world.jwtFor(a.operatorId)}` }, 403],
    ['farmer', { authorization: `Bearer ${await world.jwtFor(a.farmerIds[0]!)}` }, 403],
  ];
  for (const [label, headers, status] of cases) {
    const response = await world.post(null, `${BASE}/${aToken.id}/rotate`, { grace_period_seconds: 0 }, headers);
    t.equal(response.statusCode, status, label);
    if (status === 401) t.match(response.headers['www-authenticate'], /^Bearer\b/, `${label}: WWW-Authenticate`);
    t.equal(response.json<ErrorJson>().error.code, status === 401 ? 'unauthorized' : 'insufficient_scope', `${label}: code`);
  }
  t.equal(await world.tokenCount(), count);
  t.strictSame(await rowOf(aToken.id), original, 'row untouched');
});

t.test('the replacement reads exactly what the old token read: same scopes, same units, a deleted unit kept', async (t) => {
  const [kept, gone] = [a.unitIds[0]!, a.unitIds[1]!];
  const restricted = await world.createToken(a.jwt, { scopes: ['utilization'], cooling_unit_ids: [kept, gone] });
  const onlyGone = await world.createToken(a.jwt, { scopes: ['utilization'], cooling_unit_ids: [gone] });
  await world.db.pool.query('UPDATE cooling_units SET deleted = true, deleted_at = now() WHERE id = $1', [gone]);
  try {
    const replacement = (await world.post(a.jwt, `${BASE}/${restricted.id}/rotate`)).json<CreatedToken>();
    t.strictSame(
      replacement.cooling_unit_ids,
      [kept, gone].sort((x, y) => x - y),
      'the unit list is copied as it is',
    );
    const lonely = (await world.post(a.jwt, `${BASE}/${onlyGone.id}/rotate`)).json<CreatedToken>();
    t.strictSame(lonely.cooling_unit_ids, [gone], 'never emptied: an empty list would mean company-wide');
    t.equal(
      (await data(lonely.token, `/api/v1/analytics/utilization?cooling_unit_id=${kept}`)).statusCode,
      404,
      'and it reads no other unit',
    );
    t.equal(
      (await data(replacement.token, `/api/v1/analytics/utilization?cooling_unit_id=${a.unitIds[2]}`)).statusCode,
      404,
      'nor does the other',
    );
    t.equal((await data(replacement.token)).statusCode, 403, 'no scope it did not have');
  } finally {
    await world.db.pool.query('UPDATE cooling_units SET deleted = false, deleted_at = NULL WHERE id = $1', [gone]);
  }
});

t.test('the new secret is in the 201 only: not in retrieve, list or the logs', async (t) => {
  const token = await world.createToken(a.jwt, { name: 'rotated in the open' });
  const response = await world.post(a.jwt, `${BASE}/${token.id}/rotate`);
  const secret = response.json<CreatedToken>().token;
  const listed = await world.get(a.jwt, `${BASE}?page_size=1000`);
  const retrieved = await world.get(a.jwt, `${BASE}/${response.json<CreatedToken>().id}`);
  for (const [label, body] of [
    ['list', listed.body],
    ['retrieve', retrieved.body],
  ]) {
    t.notOk(body!.includes(secret), `${label}: no secret`);
    t.notOk(body!.includes('"token"'), `${label}: no token field`);
  }
  const logs = world.logs.join('\n');
  t.notOk(logs.includes(secret) || logs.includes(secret.slice(4, 24)), 'not in the logs, not even part of it');
});

t.test('two processes sharing Redis: the new expiry holds on the one whose cache has the old row', async (t) => {
  const redis = { REDIS_URL: 'redis://127.0.0.1:6379' };
  const one = await createTestApp(t, redis);
  const two = await createTestApp(t, redis, { database: one.db });
  const company = await createCompany(one.db.pool, 'Shared Redis Co');
  const jwt = await one.jwtFor(company.employeeId);
  const post = (url: string, payload: unknown) =>
    one.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${jwt}` }, payload: payload as object });
  const old = (await post(BASE, { name: 'cached elsewhere', scopes: ['users'] })).json<CreatedToken>();
  const onTwo = async () =>
    (await two.app.inject({ method: 'GET', url: '/api/v1/analytics/users', headers: { authorization: `Bearer ${old.token}` } })).statusCode;
  two.clock.set(one.clock.now());
  // twice: a process's first check of the shared store empties its cache (revocation.ts, epoch)
  t.equal(await onTwo(), 200, 'process two reads the old token (never expiring)');
  t.equal(await onTwo(), 200, 'and has it in its cache');

  // the id in capitals, as a client may send it: the marker is still under the token's own id
  const rotated = await post(`${BASE}/${old.id.toUpperCase()}/rotate`, { grace_period_seconds: 2 });
  t.equal(rotated.statusCode, 201);
  const end = one.clock.now().getTime() + 2000;
  t.strictSame(
    await two.app.revocations.status(old.id),
    { state: 'live', expiresAt: end },
    'the shared store tells process two the new end',
  );
  two.clock.set(new Date(end - 1));
  t.equal(await onTwo(), 200, 'accepted until the end');
  two.clock.set(new Date(end));
  t.equal(await onTwo(), 401, 'refused from the end on');
  const retrieved = (await one.app.inject({ url: `${BASE}/${old.id}`, headers: { authorization: `Bearer ${jwt}` } })).json<ApiTokenJson>();
  t.equal(retrieved.expires_at, new Date(end).toISOString());
});

t.test('rotations count against the management write limit, with creations: the 121st in a minute is 429', async (t) => {
  const limited = await createTestApp(t, {}, { realRateLimits: true });
  const company = await createCompany(limited.db.pool, 'Limited Co');
  const headers = { authorization: `Bearer ${await limited.jwtFor(company.employeeId)}`, 'content-type': 'application/json' };
  const created = await limited.app.inject({ method: 'POST', url: BASE, headers, payload: { name: 'limited', scopes: ['users'] } });
  let replacement = created.json<CreatedToken>();
  for (let i = 1; i < 120; i++) {
    const response = await limited.app.inject({
      method: 'POST',
      url: `${BASE}/${replacement.id}/rotate`,
      headers,
      payload: { grace_period_seconds: 0 },
    });
    if (response.statusCode !== 201) t.fail(`rotation ${i}: ${response.statusCode}`);
    replacement = response.json<CreatedToken>();
  }
  const refused = await limited.app.inject({ method: 'POST', url: `${BASE}/${replacement.id}/rotate`, headers, payload: {} });
  t.equal(refused.statusCode, 429);
  t.equal(refused.json<ErrorJson>().error.code, 'rate_limited');
  t.match(refused.json<ErrorJson>().error.details, { scope: 'authenticated_write' });
  t.ok(Number(refused.headers['retry-after']) > 0, 'Retry-After');
  t.equal(
    (await limited.app.inject({ url: `${BASE}/${replacement.id}`, headers })).json<ApiTokenJson>().replaced_by,
    null,
    'the refused call rotated nothing',
  );
});
