// POST /api/v1/api-tokens, the paths that succeed: 201 with the whole token object and the raw
// token, shown once.
import t from 'tap';
import { isWellFormedToken } from '../../../src/tokens/format.js';
import { API_TOKEN_KEYS, BASE, createWorld, SCOPES, TOKEN_PATTERN, UUID_PATTERN, type ApiTokenJson, type CreatedToken } from './setup.js';

const world = await createWorld(t);
const { a } = world;

t.test('a minimal body creates an active, company-wide, non-expiring token', async (t) => {
  const now = world.clock.now();
  const response = await world.post(a.jwt, BASE, { name: 'Partner ETL', scopes: ['users'] });
  t.equal(response.statusCode, 201);
  t.match(response.headers['content-type'], /^application\/json/);
  t.equal(response.headers['cache-control'], 'no-store', 'the raw token must not be cached');
  const body = response.json<CreatedToken>();
  t.strictSame(Object.keys(body).sort(), [...API_TOKEN_KEYS, 'token'].sort(), 'every field, and nothing else');
  t.match(body.id, UUID_PATTERN);
  t.equal(body.name, 'Partner ETL');
  t.equal(body.company_id, a.companyId);
  t.strictSame(body.scopes, ['users']);
  t.strictSame(body.cooling_unit_ids, [], 'omitted means company-wide');
  t.equal(body.expires_at, null, 'omitted means non-expiring');
  t.equal(body.last_used_at, null);
  t.equal(body.revoked, false);
  t.equal(body.revoked_at, null);
  t.equal(body.created_at, now.toISOString(), 'created_at comes from the app clock');
  t.equal(body.created_by, a.employeeId);
  t.match(body.token, TOKEN_PATTERN);
  t.ok(isWellFormedToken(body.token), 'the token passes its own checksum');
});

t.test('every field given: all scopes, restricted units, an expiry with an offset', async (t) => {
  const [u1, u2, u3] = a.unitIds as [number, number, number];
  const response = await world.post(a.jwt, BASE, {
    name: 'Dashboard sync',
    scopes: [...SCOPES],
    cooling_unit_ids: [u3, u1, u2],
    expires_at: '2099-06-01T12:30:00+02:00',
  });
  t.equal(response.statusCode, 201);
  const body = response.json<CreatedToken>();
  t.strictSame([...body.scopes].sort(), [...SCOPES].sort());
  t.strictSame(
    body.cooling_unit_ids,
    [u1, u2, u3].sort((x, y) => x - y),
    'the units, in id order',
  );
  t.equal(body.expires_at, '2099-06-01T10:30:00.000Z', 'expires_at is answered in UTC');
  t.equal(body.revoked, false);
});

t.test('expires_at: null explicitly is non-expiring; Z and fractional seconds are accepted', async (t) => {
  t.equal((await world.createToken(a.jwt, { expires_at: null })).expires_at, null);
  t.equal((await world.createToken(a.jwt, { expires_at: '2099-01-02T03:04:05.678Z' })).expires_at, '2099-01-02T03:04:05.678Z');
  t.equal((await world.createToken(a.jwt, { expires_at: '2099-01-02T03:04:05-00:00' })).expires_at, '2099-01-02T03:04:05.000Z');
  t.equal(
    (await world.createToken(a.jwt, { expires_at: '2096-02-29T00:00:00Z' })).expires_at,
    '2096-02-29T00:00:00.000Z',
    'a leap day is a real day',
  );
  // ISO 8601 lets the seconds go
  t.equal((await world.createToken(a.jwt, { expires_at: '2099-01-01T00:00Z' })).expires_at, '2099-01-01T00:00:00.000Z', 'minutes, Z');
  t.equal(
    (await world.createToken(a.jwt, { expires_at: '2099-01-01T00:30+02:00' })).expires_at,
    '2098-12-31T22:30:00.000Z',
    'minutes, offset',
  );
});

t.test('an expiry one second ahead of the clock is accepted', async (t) => {
  const inOneSecond = new Date(world.clock.now().getTime() + 1000).toISOString();
  t.equal((await world.createToken(a.jwt, { expires_at: inOneSecond })).expires_at, inOneSecond);
});

t.test('name is trimmed; 100 characters and any printable Unicode are fine', async (t) => {
  t.equal((await world.createToken(a.jwt, { name: '  Nightly export \u00a0' })).name, 'Nightly export');
  const hundred = 'n'.repeat(100);
  t.equal((await world.createToken(a.jwt, { name: hundred })).name, hundred);
  t.equal((await world.createToken(a.jwt, { name: `  ${hundred}  ` })).name, hundred, 'length is checked after trimming');
  t.equal((await world.createToken(a.jwt, { name: `a${' '.repeat(101)}` })).name, 'a', 'trailing spaces past 100 are trimmed, not counted');
  t.equal((await world.createToken(a.jwt, { name: '\tx\n' })).name, 'x', 'whitespace controls at the ends are trimmed away');
  const corn = '🌽'.repeat(100);
  t.equal(
    (await world.createToken(a.jwt, { name: corn })).name,
    corn,
    '100 characters outside the BMP (200 UTF-16 units): characters are code points',
  );
  t.equal((await world.createToken(a.jwt, { name: 'Récolte 🌽 — 冷藏' })).name, 'Récolte 🌽 — 冷藏');
  t.equal((await world.createToken(a.jwt, { name: "O'Brien; DROP TABLE api_tokens" })).name, "O'Brien; DROP TABLE api_tokens");
});

t.test('Content-Type with parameters or in another case is still JSON', async (t) => {
  for (const contentType of ['application/json; charset=utf-8', 'Application/JSON', 'application/json;charset=UTF-8']) {
    const response = await world.post(a.jwt, BASE, JSON.stringify({ name: 'ct', scopes: ['impact'] }), {
      'content-type': contentType,
    });
    t.equal(response.statusCode, 201, contentType);
  }
});

t.test('each creation has its own id and token, and the row stores the same data', async (t) => {
  const first = await world.createToken(a.jwt, { name: 'one' });
  const second = await world.createToken(a.jwt, { name: 'one' });
  t.not(first.id, second.id);
  t.not(first.token, second.token);
  const { rows } = await world.db.pool.query<{ name: string; company_id: number; scopes: string[]; created_by: number }>(
    'SELECT name, company_id, scopes, created_by FROM api_tokens WHERE id = $1',
    [first.id],
  );
  t.strictSame(rows, [{ name: 'one', company_id: a.companyId, scopes: ['users'], created_by: a.employeeId }]);
});

t.test('the created token reads back the same through retrieve, without the raw token', async (t) => {
  const created = await world.createToken(a.jwt, { cooling_unit_ids: [a.unitIds[0]], expires_at: '2099-01-01T00:00:00Z' });
  const response = await world.get(a.jwt, `${BASE}/${created.id}`);
  t.equal(response.statusCode, 200);
  const { token, ...metadata } = created;
  t.ok(token);
  t.strictSame(response.json<ApiTokenJson>(), metadata);
});
