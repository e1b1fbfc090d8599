// POST /api/v1/api-tokens/{token_id}/revoke, security: nobody but a Registered Employee of the
// token's company can revoke it, and a refused attempt leaves the token exactly as it was.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';
import { BASE, createWorld, type ApiTokenJson, type ErrorJson } from './setup.js';

const world = await createWorld(t);
const { a, b } = world;
const aToken = await world.createToken(a.jwt, { name: 'A production', scopes: ['users', 'utilization'] });
const rowOf = async (id: string) =>
  (await world.db.pool.query('SELECT revoked, revoked_at, name, expires_at, token_hash FROM api_tokens WHERE id = $1', [id])).rows[0];
const original = await rowOf(aToken.id);

t.test('company B cannot revoke company A’s token: 404 like an unknown id, and the token is unchanged', async (t) => {
  const foreign = await world.post(b.jwt, `${BASE}/${aToken.id}/revoke`);
  const unknown = await world.post(b.jwt, `${BASE}/${randomUUID()}/revoke`);
  t.equal(foreign.statusCode, 404);
  t.equal(foreign.json<ErrorJson>().error.code, 'not_found');
  t.equal(foreign.body, unknown.body, 'indistinguishable from a token that does not exist');
  t.notOk(foreign.body.includes(aToken.name));
  t.strictSame(await rowOf(aToken.id), original, 'row untouched');
  const seenByA = (await world.get(a.jwt, `${BASE}/${aToken.id}`)).json<ApiTokenJson>();
  t.equal(seenByA.revoked, false);
  t.equal(seenByA.revoked_at, null);
});

t.test('401 and 403 callers revoke nothing', async (t) => {
  const cases: Array<[string, Record<string, string>, number]> = [
    ['no Authorization', {}, 401],
    ['garbage JWT', { authorization: 'Bearer x.y.z' }, 401],
    ['the API token itself', { authorization: `Bearer ${aToken.token}` }, 401],
    ['inactive employee', { authorization: `Bearer ${await world.jwtFor(a.inactiveEmployeeId)}` }, 401],
    ['operator', { authorization: `Bearer ${await world.jwtFor(a.operatorId)}` }, 403],
    ['farmer', { authorization: `Bearer ${await world.jwtFor(a.farmerIds[1]!)}` }, 403],
  ];
  for (const [label, headers, status] of cases) {
    const response = await world.post(null, `${BASE}/${aToken.id}/revoke`, undefined, headers);
    t.equal(response.statusCode, status, label);
    if (status === 401) t.match(response.headers['www-authenticate'], /^Bearer\b/, `${label}: WWW-Authenticate`);
    t.equal(response.json<ErrorJson>().error.code, status === 401 ? 'unauthorized' : 'insufficient_scope', `${label}: code`);
  }
  t.strictSame(await rowOf(aToken.id), original, 'row untouched');
});

t.test('the token keeps working on the data surface after the refused attempts', async (t) => {
  const response = await world.app.inject({
    method: 'GET',
    url: '/api/v1/analytics/utilization?page_size=1',
    headers: { authorization: `Bearer ${aToken.token}` },
  });
  t.not(response.statusCode, 401);
});

t.test('SQL-looking ids are plain misses and revoke nothing', async (t) => {
  const bToken = await world.createToken(b.jwt, { name: 'B token' });
  for (const id of [
    "' OR '1'='1",
    `${aToken.id}' OR '1'='1`,
    `${bToken.id}' OR company_id = ${b.companyId} --`,
    "x'; UPDATE api_tokens SET revoked = true, revoked_at = now(); --",
    '1 OR 1=1',
  ]) {
    const response = await world.post(a.jwt, `${BASE}/${encodeURIComponent(id)}/revoke`);
    t.equal(response.statusCode, 404, id);
  }
  const { rows } = await world.db.pool.query('SELECT count(*)::int AS n FROM api_tokens WHERE revoked');
  t.equal(rows[0].n, 0, 'no token revoked');
});

t.test('the revoke answer and the logs never carry the raw token', async (t) => {
  const token = await world.createToken(a.jwt, { name: 'revoked in the open' });
  const response = await world.post(a.jwt, `${BASE}/${token.id}/revoke?token=${token.token}`);
  t.ok(response.statusCode < 500);
  const clean = await world.post(a.jwt, `${BASE}/${token.id}/revoke`);
  t.equal(clean.statusCode, 200);
  t.notOk(clean.body.includes(token.token));
  t.notOk(clean.body.includes('"token"'));
  t.notOk(world.logs.join('\n').includes(token.token), 'not in the logs');
  t.notOk(world.logs.join('\n').includes(token.token.slice(4, 24)), 'not even part of it');
});

t.test('two processes sharing Redis: a revoke naming the id in capitals reaches the other process too', async (t) => {
  const redis = { REDIS_URL: 'redis://127.0.0.1:6379' };
  const one = await createTestApp(t, redis);
  const two = await createTestApp(t, redis, { database: one.db });
  const company = await createCompany(one.db.pool, 'Shared Redis Co');
  const headers = { authorization: `Bearer ${await one.jwtFor(company.employeeId)}` };
  const created = await one.app.inject({ method: 'POST', url: BASE, headers, payload: { name: 'cached elsewhere', scopes: ['users'] } });
  const token = created.json<{ id: string; token: string }>();
  const onTwo = async () =>
    (await two.app.inject({ url: '/api/v1/analytics/users', headers: { authorization: `Bearer ${token.token}` } })).statusCode;
  // twice: a process's first check of the shared store empties its cache (revocation.ts, epoch)
  t.equal(await onTwo(), 200, 'process two reads the token');
  t.equal(await onTwo(), 200, 'and has it in its cache');
  const revoked = await one.app.inject({ method: 'POST', url: `${BASE}/${token.id.toUpperCase()}/revoke`, headers });
  t.equal(revoked.statusCode, 200);
  t.strictSame(await two.app.revocations.status(token.id), { state: 'revoked' }, 'the marker is under the token’s own id');
  t.equal(await onTwo(), 401, 'process two refuses it at once');
});
