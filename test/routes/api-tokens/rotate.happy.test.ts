// POST /api/v1/api-tokens/{token_id}/rotate: a replacement with the same name, scopes, units and
// expiry (its raw token shown once), and the old token ending after the grace period, to the
// millisecond of the app's clock, on the data surface too. Both name each other.
import t from 'tap';
import {
  API_TOKEN_KEYS,
  BASE,
  createWorld,
  EMPTY_BODIES,
  TOKEN_PATTERN,
  UUID_PATTERN,
  type ApiTokenJson,
  type CreatedToken,
  type ListJson,
} from './setup.js';

const world = await createWorld(t);
const { a } = world;
const HOUR_MS = 3_600_000;

const rotate = (id: string, payload?: unknown, headers: Record<string, string> = {}) =>
  world.post(a.jwt, `${BASE}/${id}/rotate`, payload, headers);
const retrieve = async (id: string) => (await world.get(a.jwt, `${BASE}/${id}`)).json<ApiTokenJson>();
/** The status a data request with this raw token gets. */
const dataStatus = async (token: string) =>
  (await world.app.inject({ method: 'GET', url: '/api/v1/analytics/users', headers: { authorization: `Bearer ${token}` } })).statusCode;

t.test('201: a replacement like the old token, its raw token once; the old one ends in 24 hours by default', async (t) => {
  const expiresAt = new Date(world.clock.now().getTime() + 90 * 24 * HOUR_MS).toISOString();
  const old = await world.createToken(a.jwt, {
    name: 'Partner ERP',
    scopes: ['users', 'impact'],
    cooling_unit_ids: [a.unitIds[2], a.unitIds[0]],
    expires_at: expiresAt,
  });
  world.clock.advance(60_000);
  const now = world.clock.now();
  const response = await rotate(old.id);
  t.equal(response.statusCode, 201);
  t.equal(response.headers['cache-control'], 'no-store', 'the secret is not cached');
  const created = response.json<CreatedToken>();
  t.strictSame(Object.keys(created).sort(), [...API_TOKEN_KEYS, 'token'].sort(), 'every field, and the raw token');
  t.match(created.token, TOKEN_PATTERN);
  t.not(created.token, old.token, 'a new secret');
  t.match(created.id, UUID_PATTERN);
  t.not(created.id, old.id);
  t.strictSame(
    {
      name: created.name,
      company_id: created.company_id,
      scopes: created.scopes,
      cooling_unit_ids: created.cooling_unit_ids,
      expires_at: created.expires_at,
    },
    { name: old.name, company_id: old.company_id, scopes: old.scopes, cooling_unit_ids: old.cooling_unit_ids, expires_at: old.expires_at },
    'same name, company, scopes, units and expiry',
  );
  t.equal(created.created_at, now.toISOString());
  t.equal(created.created_by, a.employeeId);
  t.equal(created.rotated_from, old.id);
  t.equal(created.replaced_by, null);
  t.equal(created.revoked, false);
  t.equal(created.last_used_at, null);

  const before = await retrieve(old.id);
  t.equal(before.replaced_by, created.id, 'the old token names its replacement');
  t.equal(before.rotated_from, null);
  t.equal(before.expires_at, new Date(now.getTime() + 24 * HOUR_MS).toISOString(), 'the old token ends after the default grace');
  t.equal(before.revoked, false, 'not revoked: it keeps working during the grace period');

  const { token: _secret, ...metadata } = created;
  t.strictSame(await retrieve(created.id), metadata, 'retrieve shows the replacement, without the secret');
  const listed = (await world.get(a.jwt, `${BASE}?page_size=1000`)).json<ListJson>();
  t.strictSame(
    listed.data.find((token) => token.id === created.id),
    metadata,
    'the list shows it too',
  );
  t.equal(listed.data.find((token) => token.id === old.id)?.replaced_by, created.id);
  t.notOk(
    listed.data.some((token) => 'token' in token),
    'the list never carries a raw token',
  );
});

t.test('grace period: both tokens work until it ends, the old one is refused from that millisecond on', async (t) => {
  const old = await world.createToken(a.jwt, { scopes: ['users'] });
  t.equal(await dataStatus(old.token), 200, 'the old token works (and is cached)');
  const start = world.clock.now().getTime();
  const response = await rotate(old.id, { grace_period_seconds: 3600 });
  t.equal(response.statusCode, 201);
  const replacement = response.json<CreatedToken>();
  t.equal((await retrieve(old.id)).expires_at, new Date(start + HOUR_MS).toISOString());

  t.equal(await dataStatus(old.token), 200, 'right after the rotation: the old token');
  t.equal(await dataStatus(replacement.token), 200, 'and the new one');
  world.clock.set(new Date(start + HOUR_MS - 1));
  t.equal(await dataStatus(old.token), 200, 'a millisecond before the end: the old token still works');
  world.clock.set(new Date(start + HOUR_MS));
  t.equal(await dataStatus(old.token), 401, 'at the end: refused');
  t.equal(await dataStatus(replacement.token), 200, 'the new one keeps working');
  const active = (await world.get(a.jwt, `${BASE}?state=active&page_size=1000`)).json<ListJson>().data.map((token) => token.id);
  const expired = (await world.get(a.jwt, `${BASE}?state=expired&page_size=1000`)).json<ListJson>().data.map((token) => token.id);
  t.ok(expired.includes(old.id) && !active.includes(old.id), 'the old token is listed as expired');
  t.ok(active.includes(replacement.id), 'the new one as active');
});

t.test('grace 0: the old token stops at once', async (t) => {
  const old = await world.createToken(a.jwt, { scopes: ['users'] });
  t.equal(await dataStatus(old.token), 200, 'cached while it works');
  const response = await rotate(old.id, { grace_period_seconds: 0 });
  t.equal(response.statusCode, 201);
  t.equal((await retrieve(old.id)).expires_at, world.clock.now().toISOString());
  t.equal(await dataStatus(old.token), 401, 'refused right after the 201');
  t.equal(await dataStatus(response.json<CreatedToken>().token), 200, 'the new one works');
});

t.test('expiry: a never-expiring token stays never-expiring; a sooner expiry than the grace is kept', async (t) => {
  const forever = await world.createToken(a.jwt, { expires_at: null });
  const replaced = (await rotate(forever.id, { grace_period_seconds: 600 })).json<CreatedToken>();
  t.equal(replaced.expires_at, null, 'the replacement never expires either');
  t.equal((await retrieve(forever.id)).expires_at, new Date(world.clock.now().getTime() + 600_000).toISOString());

  const soon = new Date(world.clock.now().getTime() + 10 * 60_000).toISOString();
  const ending = await world.createToken(a.jwt, { expires_at: soon });
  const successor = (await rotate(ending.id, { grace_period_seconds: 3600 })).json<CreatedToken>();
  t.equal(successor.expires_at, soon, 'the replacement keeps the expiry');
  t.equal((await retrieve(ending.id)).expires_at, soon, 'the old token ends no later than it would have');
});

t.test('the grace period at its bounds', async (t) => {
  for (const seconds of [0, 1, 604_800]) {
    const old = await world.createToken(a.jwt);
    const response = await rotate(old.id, { grace_period_seconds: seconds });
    t.equal(response.statusCode, 201, `${seconds} s`);
    t.equal((await retrieve(old.id)).expires_at, new Date(world.clock.now().getTime() + seconds * 1000).toISOString());
  }
});

t.test('no body, an empty JSON body or {}: the default grace of 24 hours', async (t) => {
  for (const [label, headers, payload] of EMPTY_BODIES) {
    const old = await world.createToken(a.jwt);
    const response = await rotate(old.id, payload, headers);
    t.equal(response.statusCode, 201, label);
    t.equal((await retrieve(old.id)).expires_at, new Date(world.clock.now().getTime() + 24 * HOUR_MS).toISOString(), `${label}: 24 h`);
  }
});

t.test('a replacement can be rotated in turn: a chain of links', async (t) => {
  const first = await world.createToken(a.jwt, { name: 'chain' });
  const second = (await rotate(first.id, { grace_period_seconds: 60 })).json<CreatedToken>();
  const third = (await rotate(second.id, { grace_period_seconds: 60 })).json<CreatedToken>();
  t.equal(third.rotated_from, second.id);
  t.strictSame(
    [await retrieve(first.id), await retrieve(second.id), await retrieve(third.id)].map((token) => [token.rotated_from, token.replaced_by]),
    [
      [null, second.id],
      [first.id, third.id],
      [second.id, null],
    ],
  );
  t.equal(third.name, 'chain');
});

t.test('the old token can still be revoked during its grace period; the replacement is untouched', async (t) => {
  const old = await world.createToken(a.jwt, { scopes: ['users'] });
  const replacement = (await rotate(old.id, { grace_period_seconds: 3600 })).json<CreatedToken>();
  const revoked = await world.post(a.jwt, `${BASE}/${old.id}/revoke`);
  t.equal(revoked.statusCode, 200);
  t.equal(revoked.json<ApiTokenJson>().replaced_by, replacement.id, 'the revoke answer carries the links too');
  t.equal(await dataStatus(old.token), 401, 'the old token is refused');
  t.equal(await dataStatus(replacement.token), 200, 'the new one works');
  t.equal((await retrieve(replacement.id)).revoked, false);
});

t.test('the id is matched whatever the case of its hex digits', async (t) => {
  const old = await world.createToken(a.jwt);
  const response = await rotate(old.id.toUpperCase());
  t.equal(response.statusCode, 201);
  t.equal(response.json<CreatedToken>().rotated_from, old.id);
});
