// POST /api/v1/api-tokens/{token_id}/revoke, refused calls: unknown or malformed ids are 404,
// a non-JSON body is 415, and none of them revokes anything.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { BASE, createWorld, type ApiTokenJson, type ErrorJson } from './setup.js';

const world = await createWorld(t);
const { a } = world;
const existing = await world.createToken(a.jwt);

const revokedCount = async () =>
  (await world.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_tokens WHERE revoked')).rows[0]!.n;

t.test('an unknown UUID is 404 not_found', async (t) => {
  for (const id of [randomUUID(), '00000000-0000-0000-0000-000000000000']) {
    const response = await world.post(a.jwt, `${BASE}/${id}/revoke`);
    t.equal(response.statusCode, 404, id);
    t.equal(response.json<ErrorJson>().error.code, 'not_found');
  }
  t.equal(await revokedCount(), 0);
});

t.test('an id that is not a UUID is 404', async (t) => {
  for (const id of [
    'abc',
    '1',
    '-1',
    existing.id.replace(/-/g, ''),
    `${existing.id}x`,
    `{${existing.id}}`,
    'x'.repeat(150),
    existing.token,
  ]) {
    const response = await world.post(a.jwt, `${BASE}/${encodeURIComponent(id)}/revoke`);
    t.equal(response.statusCode, 404, `${id.slice(0, 40)} (${id.length} chars)`);
    t.equal(response.json<ErrorJson>().error?.code, 'not_found');
  }
  t.equal(await revokedCount(), 0, 'nothing revoked');
});

t.test('a body that is not JSON is 415 and revokes nothing', async (t) => {
  for (const [contentType, payload] of [
    ['text/plain', 'revoke please'],
    ['application/x-www-form-urlencoded', 'reason=leak'],
    ['application/xml', '<revoke/>'],
  ] as const) {
    const response = await world.post(a.jwt, `${BASE}/${existing.id}/revoke`, payload, { 'content-type': contentType });
    t.equal(response.statusCode, 415, contentType);
    t.equal(response.json<ErrorJson>().error.code, 'unsupported_media_type');
  }
  t.equal(await revokedCount(), 0);
});

t.test('malformed JSON is 400 and revokes nothing', async (t) => {
  for (const payload of ['{', '{"a":', 'nul', '{"__proto__":{"x":1}}']) {
    const response = await world.post(a.jwt, `${BASE}/${existing.id}/revoke`, payload, { 'content-type': 'application/json' });
    t.equal(response.statusCode, 400, payload);
    t.equal(response.json<ErrorJson>().error.code, 'invalid_request');
  }
  t.equal(await revokedCount(), 0);
});

t.test('other methods on the revoke path do not revoke', async (t) => {
  for (const method of ['GET', 'PUT', 'DELETE', 'PATCH'] as const) {
    const response = await world.app.inject({
      method,
      url: `${BASE}/${existing.id}/revoke`,
      headers: { authorization: `Bearer ${a.jwt}` },
    });
    t.ok(response.statusCode >= 400 && response.statusCode < 500, `${method}: ${response.statusCode}`);
    t.type(response.json<ErrorJson>().error?.code, 'string', `${method}: an error body`);
  }
  const del = await world.app.inject({ method: 'DELETE', url: `${BASE}/${existing.id}`, headers: { authorization: `Bearer ${a.jwt}` } });
  t.ok(del.statusCode >= 400 && del.statusCode < 500, 'DELETE on the token is not a revoke');
  t.equal(await revokedCount(), 0);
  t.equal((await world.get(a.jwt, `${BASE}/${existing.id}`)).json<ApiTokenJson>().revoked, false);
});
