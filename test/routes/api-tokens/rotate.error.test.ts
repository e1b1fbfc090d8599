// POST /api/v1/api-tokens/{token_id}/rotate, refused calls: only an active token that was never
// rotated can be (409 conflict, details.reason), unknown or malformed ids are 404, a bad grace
// period or an unknown body field is 400, a non-JSON body 415; none of them creates or changes a token.
import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import { BASE, createWorld, type ApiTokenJson, type CreatedToken, type ErrorJson } from './setup.js';

const world = await createWorld(t);
const { a } = world;
const rotate = (id: string, payload?: unknown, headers: Record<string, string> = {}) =>
  world.post(a.jwt, `${BASE}/${id}/rotate`, payload, headers);
const rowOf = async (id: string) =>
  (await world.db.pool.query('SELECT expires_at, revoked, revoked_at, token_hash FROM api_tokens WHERE id = $1', [id])).rows[0];

/** The call was refused with `status`/`code` and changed nothing: no new token, the old row as it was. */
async function refusedWithoutChange(
  t: Test,
  id: string,
  call: () => Promise<{ statusCode: number; json<T>(): T }>,
  status: number,
  code: string,
) {
  const [count, row] = [await world.tokenCount(), await rowOf(id)];
  const response = await call();
  t.equal(response.statusCode, status);
  const body = response.json<ErrorJson>();
  t.equal(body.error.code, code);
  t.equal(await world.tokenCount(), count, 'no token created');
  t.strictSame(await rowOf(id), row, 'the token is unchanged');
  return body;
}

t.test('409 conflict with details.reason: revoked, expired, already rotated', async (t) => {
  const revoked = await world.createToken(a.jwt);
  await world.post(a.jwt, `${BASE}/${revoked.id}/revoke`);
  const body = await refusedWithoutChange(t, revoked.id, () => rotate(revoked.id), 409, 'conflict');
  t.strictSame(body.error.details, { reason: 'revoked' });
  t.match(body.error.message, /revoked/);

  const expiring = await world.createToken(a.jwt, { expires_at: new Date(world.clock.now().getTime() + 60_000).toISOString() });
  world.clock.advance(60_000);
  const expired = await refusedWithoutChange(t, expiring.id, () => rotate(expiring.id), 409, 'conflict');
  t.strictSame(expired.error.details, { reason: 'expired' }, 'expired at exactly expires_at');

  const rotated = await world.createToken(a.jwt);
  t.equal((await rotate(rotated.id, { grace_period_seconds: 3600 })).statusCode, 201);
  const again = await refusedWithoutChange(t, rotated.id, () => rotate(rotated.id), 409, 'conflict');
  t.strictSame(again.error.details, { reason: 'already_rotated' }, 'still in its grace period');
  t.match(again.error.message, /replacement/);

  const ended = await world.createToken(a.jwt);
  t.equal((await rotate(ended.id, { grace_period_seconds: 0 })).statusCode, 201);
  const done = await refusedWithoutChange(t, ended.id, () => rotate(ended.id), 409, 'conflict');
  t.strictSame(done.error.details, { reason: 'already_rotated' }, 'a rotated token that has ended says why it ended');
});

t.test('two rotations of one token at once: one 201, one 409 already_rotated', async (t) => {
  const token = await world.createToken(a.jwt);
  const count = await world.tokenCount();
  const responses = await Promise.all([rotate(token.id), rotate(token.id), rotate(token.id)]);
  t.strictSame(responses.map((response) => response.statusCode).sort(), [201, 409, 409]);
  for (const response of responses.filter((response) => response.statusCode === 409)) {
    t.strictSame(response.json<ErrorJson>().error.details, { reason: 'already_rotated' });
  }
  t.equal(await world.tokenCount(), count + 1, 'one replacement');
  const winner = responses.find((response) => response.statusCode === 201)!.json<CreatedToken>();
  t.equal((await world.get(a.jwt, `${BASE}/${token.id}`)).json<ApiTokenJson>().replaced_by, winner.id);
});

t.test('an unknown UUID or an id that is not a UUID is 404 not_found', async (t) => {
  const count = await world.tokenCount();
  const existing = await world.createToken(a.jwt);
  for (const id of [
    randomUUID(),
    '00000000-0000-0000-0000-000000000000',
    'abc',
    '1',
    existing.id.replace(/-/g, ''),
    `${existing.id}x`,
    'x'.repeat(150),
    existing.token,
  ]) {
    const response = await rotate(encodeURIComponent(id));
    t.equal(response.statusCode, 404, `${id.slice(0, 40)} (${id.length} chars)`);
    t.equal(response.json<ErrorJson>().error.code, 'not_found');
  }
  t.equal(await world.tokenCount(), count + 1, 'nothing created but the one token');
});

t.test('a bad grace period or an unknown body field is 400 naming it', async (t) => {
  const token = await world.createToken(a.jwt);
  const cases: Array<[unknown, string]> = [
    [{ grace_period_seconds: -1 }, 'grace_period_seconds'],
    [{ grace_period_seconds: 604_801 }, 'grace_period_seconds'],
    [{ grace_period_seconds: 1.5 }, 'grace_period_seconds'],
    [{ grace_period_seconds: '3600' }, 'grace_period_seconds'],
    [{ grace_period_seconds: null }, 'grace_period_seconds'],
    [{ grace_period_seconds: true }, 'grace_period_seconds'],
    [{ grace_period_seconds: 1e300 }, 'grace_period_seconds'],
    [{ grace: 60 }, 'grace'],
    [{ grace_period_seconds: 60, name: 'renamed' }, 'name'],
    [{ expires_at: null }, 'expires_at'],
    [[60], 'body'],
    ['"60"', 'body'],
    [60, 'body'],
  ];
  for (const [payload, field] of cases) {
    const raw = typeof payload === 'string' ? payload : JSON.stringify(payload);
    const body = await refusedWithoutChange(
      t,
      token.id,
      () => rotate(token.id, raw, { 'content-type': 'application/json' }),
      400,
      'invalid_request',
    );
    t.equal(body.error.details?.field, field, raw);
  }
  const message = (await rotate(token.id, { grace_period_seconds: 604_801 })).json<ErrorJson>().error.message;
  t.match(message, /grace_period_seconds must be at most 604800/, 'the message says the bound');
});

t.test('a body that is not JSON is 415; malformed JSON is 400; neither rotates', async (t) => {
  const token = await world.createToken(a.jwt);
  for (const [contentType, payload] of [
    ['text/plain', 'grace=60'],
    ['application/x-www-form-urlencoded', 'grace_period_seconds=60'],
  ] as const) {
    await refusedWithoutChange(
      t,
      token.id,
      () => rotate(token.id, payload, { 'content-type': contentType }),
      415,
      'unsupported_media_type',
    );
  }
  for (const payload of ['{', '{"grace_period_seconds":', 'nul', '{"__proto__":{"x":1}}']) {
    await refusedWithoutChange(
      t,
      token.id,
      () => rotate(token.id, payload, { 'content-type': 'application/json' }),
      400,
      'invalid_request',
    );
  }
});

t.test('other methods on the rotate path do not rotate', async (t) => {
  const token = await world.createToken(a.jwt);
  const count = await world.tokenCount();
  for (const method of ['GET', 'PUT', 'DELETE', 'PATCH'] as const) {
    const response = await world.app.inject({ method, url: `${BASE}/${token.id}/rotate`, headers: { authorization: `Bearer ${a.jwt}` } });
    t.ok(response.statusCode >= 400 && response.statusCode < 500, `${method}: ${response.statusCode}`);
    t.type(response.json<ErrorJson>().error?.code, 'string', `${method}: an error body`);
  }
  t.equal(await world.tokenCount(), count);
});
