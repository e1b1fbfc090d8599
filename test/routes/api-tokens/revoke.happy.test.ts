// POST /api/v1/api-tokens/{token_id}/revoke: active -> revoked, idempotent, and an expired token
// can be revoked too. The answer never carries the raw token.
import t from 'tap';
import { API_TOKEN_KEYS, BASE, createWorld, EMPTY_BODIES, type ApiTokenJson, type CreatedToken, type ListJson } from './setup.js';

const world = await createWorld(t);
const { a } = world;

const revoke = (id: string, headers: Record<string, string> = {}, payload?: string) =>
  world.post(a.jwt, `${BASE}/${id}/revoke`, payload, headers);
const withoutSecret = ({ token, ...metadata }: CreatedToken): ApiTokenJson => {
  if (!token) throw new Error('a created token has its raw value');
  return metadata;
};

t.test('revoking an active token: 200, revoked=true at the clock’s instant, no raw token', async (t) => {
  const created = await world.createToken(a.jwt, { name: 'to revoke', scopes: ['users', 'impact'], cooling_unit_ids: [a.unitIds[1]] });
  world.clock.advance(90_000);
  const now = world.clock.now().toISOString();
  const response = await revoke(created.id);
  t.equal(response.statusCode, 200);
  t.match(response.headers['content-type'], /^application\/json/);
  const body = response.json<ApiTokenJson>();
  t.strictSame(Object.keys(body).sort(), [...API_TOKEN_KEYS].sort(), 'every field, no `token`');
  t.equal(body.revoked, true);
  t.equal(body.revoked_at, now);
  t.strictSame({ ...body, revoked: false, revoked_at: null }, withoutSecret(created), 'nothing else changed');
});

t.test('revoking twice is idempotent: the same object, the first revoked_at', async (t) => {
  const created = await world.createToken(a.jwt);
  const first = await revoke(created.id);
  world.clock.advance(3_600_000);
  const second = await revoke(created.id);
  t.equal(second.statusCode, 200);
  t.strictSame(second.json(), first.json());
  world.clock.advance(1000);
  const third = await revoke(created.id);
  t.equal(third.json<ApiTokenJson>().revoked_at, first.json<ApiTokenJson>().revoked_at);
});

t.test('revoking an expired token marks it revoked', async (t) => {
  const created = await world.createToken(a.jwt, { expires_at: new Date(world.clock.now().getTime() + 60_000).toISOString() });
  world.clock.advance(61_000);
  const expired = (await world.get(a.jwt, `${BASE}?state=expired`)).json<ListJson>();
  t.ok(
    expired.data.some((token) => token.id === created.id),
    'expired before the revoke',
  );
  const response = await revoke(created.id);
  t.equal(response.statusCode, 200);
  const body = response.json<ApiTokenJson>();
  t.equal(body.revoked, true);
  t.equal(body.revoked_at, world.clock.now().toISOString());
  t.equal(body.expires_at, created.expires_at, 'expires_at is kept');
  const revoked = (await world.get(a.jwt, `${BASE}?state=revoked`)).json<ListJson>();
  t.ok(
    revoked.data.some((token) => token.id === created.id),
    'listed as revoked',
  );
  const stillExpired = (await world.get(a.jwt, `${BASE}?state=expired`)).json<ListJson>();
  t.notOk(
    stillExpired.data.some((token) => token.id === created.id),
    'no longer listed as expired',
  );
});

t.test('retrieve and list show the revocation', async (t) => {
  const created = await world.createToken(a.jwt);
  const revoked = (await revoke(created.id)).json<ApiTokenJson>();
  t.strictSame((await world.get(a.jwt, `${BASE}/${created.id}`)).json(), revoked);
  const listed = (await world.get(a.jwt, `${BASE}?state=revoked&page_size=1000`)).json<ListJson>();
  t.strictSame(
    listed.data.find((token) => token.id === created.id),
    revoked,
  );
});

t.test('the id is matched whatever the case of its hex digits', async (t) => {
  const created = await world.createToken(a.jwt);
  const response = await revoke(created.id.toUpperCase());
  t.equal(response.statusCode, 200);
  t.equal(response.json<ApiTokenJson>().id, created.id);
  t.equal(response.json<ApiTokenJson>().revoked, true);
});

t.test('the call needs no body; an empty JSON object or an empty JSON body is fine too', async (t) => {
  for (const [label, headers, payload] of EMPTY_BODIES) {
    const created = await world.createToken(a.jwt);
    const response = await revoke(created.id, headers, payload);
    t.equal(response.statusCode, 200, label);
    t.equal(response.json<ApiTokenJson>().revoked, true, `${label}: revoked`);
  }
});

t.test('a revoked token is refused on the data surface (401) right after the call', async (t) => {
  const created = await world.createToken(a.jwt, { scopes: ['utilization'] });
  const data = () =>
    world.app.inject({
      method: 'GET',
      url: '/api/v1/analytics/utilization?page_size=1',
      headers: { authorization: `Bearer ${created.token}` },
    });
  t.not((await data()).statusCode, 401, 'accepted before');
  t.equal((await revoke(created.id)).statusCode, 200);
  const after = await data();
  t.equal(after.statusCode, 401, 'refused after');
  t.match(after.headers['www-authenticate'], /^Bearer\b/);
});
