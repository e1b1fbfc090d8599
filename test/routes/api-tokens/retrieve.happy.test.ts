// GET /api/v1/api-tokens/{token_id}: one token of the caller's company, as it stands now.
import t from 'tap';
import { API_TOKEN_KEYS, BASE, createWorld, type ApiTokenJson, type CreatedToken } from './setup.js';

const world = await createWorld(t);
const { a } = world;

const retrieve = async (id: string) => {
  const response = await world.get(a.jwt, `${BASE}/${id}`);
  if (response.statusCode !== 200) throw new Error(`retrieve answered ${response.statusCode}: ${response.body}`);
  return response.json<ApiTokenJson>();
};
const withoutSecret = ({ token, ...metadata }: CreatedToken): ApiTokenJson => {
  if (!token) throw new Error('a created token has its raw value');
  return metadata;
};

t.test('returns the token as created, every field but the raw token', async (t) => {
  const created = await world.createToken(a.jwt, {
    name: 'Partner ETL',
    scopes: ['revenue', 'sensor_data'],
    cooling_unit_ids: [a.unitIds[2], a.unitIds[0]],
    expires_at: '2099-12-31T23:59:59Z',
  });
  const response = await world.get(a.jwt, `${BASE}/${created.id}`);
  t.equal(response.statusCode, 200);
  t.match(response.headers['content-type'], /^application\/json/);
  const body = response.json<ApiTokenJson>();
  t.strictSame(Object.keys(body).sort(), [...API_TOKEN_KEYS].sort());
  t.strictSame(body, withoutSecret(created));
  t.strictSame(body.cooling_unit_ids, [a.unitIds[0], a.unitIds[2]]);
});

t.test('the id is matched whatever the case of its hex digits', async (t) => {
  const created = await world.createToken(a.jwt);
  t.strictSame(await retrieve(created.id.toUpperCase()), withoutSecret(created));
});

t.test('a revoked token reads as revoked, with its revoked_at', async (t) => {
  const created = await world.createToken(a.jwt);
  world.clock.advance(5000);
  const revokedAt = world.clock.now().toISOString();
  await world.post(a.jwt, `${BASE}/${created.id}/revoke`);
  world.clock.advance(5000);
  const body = await retrieve(created.id);
  t.equal(body.revoked, true);
  t.equal(body.revoked_at, revokedAt);
  t.strictSame({ ...body, revoked: false, revoked_at: null }, withoutSecret(created), 'nothing else changed');
});

t.test('an expired token is still retrievable, unchanged', async (t) => {
  const created = await world.createToken(a.jwt, { expires_at: new Date(world.clock.now().getTime() + 60_000).toISOString() });
  world.clock.advance(61_000);
  t.strictSame(await retrieve(created.id), withoutSecret(created));
});

t.test('each id answers its own token', async (t) => {
  const first = await world.createToken(a.jwt, { name: 'first' });
  const second = await world.createToken(a.jwt, { name: 'second' });
  t.equal((await retrieve(first.id)).name, 'first');
  t.equal((await retrieve(second.id)).name, 'second');
});
