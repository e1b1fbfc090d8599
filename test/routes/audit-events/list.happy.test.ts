// GET /api/v1/audit-events: create, rotate and revoke each leave their event, read back newest
// first with who (the employee), when (the app's clock), from where (the client IP as TRUST_PROXY
// resolves it, the User-Agent, the request id) and what was set; the events chain by hash; the
// filters (token_id either way round a rotation, action, from/to) and pagination in the envelope.
import t from 'tap';
import { createTestApp } from '../../helpers/app.js';
import { BASE, createWorld, type CreatedToken } from '../api-tokens/setup.js';
import { AUDIT_EVENT_KEYS, EVENTS, listEvents, type AuditEventJson } from './setup.js';

// the app trusts the test's own address and an inner network as proxies: X-Forwarded-For names the client
const world = await createWorld(t, { TRUST_PROXY: '127.0.0.1,10.0.0.0/8' });
const { a } = world;
const MINUTE_MS = 60_000;
const from = (ip: string, userAgent: string, requestId: string) => ({
  'x-forwarded-for': ip,
  'user-agent': userAgent,
  'x-request-id': requestId,
});
const employee = { type: 'employee', id: String(a.employeeId), name: 'Alpha Cold registered_employee' };

const createdAt = world.clock.now();
const expiresAt = new Date(createdAt.getTime() + 90 * 86_400_000).toISOString();
const created = await world.post(
  a.jwt,
  BASE,
  { name: 'Partner ERP', scopes: ['utilization', 'users'], cooling_unit_ids: [a.unitIds[1], a.unitIds[0]], expires_at: expiresAt },
  from('198.51.100.7', 'partner-console/1.0', 'req-create-1'),
);
const old = created.json<CreatedToken>();
world.clock.advance(MINUTE_MS);
const rotatedAt = world.clock.now();
const rotated = await world.post(
  a.jwt,
  `${BASE}/${old.id}/rotate`,
  { grace_period_seconds: 3600 },
  from('198.51.100.8, 10.0.0.1', 'curl/8.5.0', 'req-rotate-1'),
);
const replacement = rotated.json<CreatedToken>();
world.clock.advance(MINUTE_MS);
const revokedAt = world.clock.now();
const revoked = await world.post(a.jwt, `${BASE}/${replacement.id}/revoke`, undefined, from('2001:db8::7', 'ops-script', 'req-revoke-1'));

t.test('each action leaves its event, newest first, with actor, time, IP, user agent, request id and details', async (t) => {
  t.strictSame([created.statusCode, rotated.statusCode, revoked.statusCode], [201, 201, 200]);
  const page = await listEvents(world, a.jwt);
  t.equal(page.data.length, 3);
  for (const event of page.data)
    t.strictSame(Object.keys(event).sort(), AUDIT_EVENT_KEYS, `${event.action}: exactly the documented fields`);
  const [revocation, rotation, creation] = page.data as [AuditEventJson, AuditEventJson, AuditEventJson];
  t.match(revocation, {
    sequence: 3,
    action: 'token.revoked',
    token_id: replacement.id,
    related_token_id: null,
    actor: employee,
    occurred_at: revokedAt.toISOString(),
    client_ip: '2001:db8::7',
    user_agent: 'ops-script',
    request_id: 'req-revoke-1',
    details: {},
  });
  t.strictSame(revocation.actor, employee, 'the actor: the employee the JWT named, with their name');
  t.match(rotation, {
    sequence: 2,
    action: 'token.rotated',
    token_id: old.id,
    related_token_id: replacement.id,
    occurred_at: rotatedAt.toISOString(),
    client_ip: '198.51.100.8',
    user_agent: 'curl/8.5.0',
    request_id: 'req-rotate-1',
  });
  t.strictSame(
    rotation.details,
    { grace_period_seconds: 3600, old_token_expires_at: new Date(rotatedAt.getTime() + 3_600_000).toISOString(), allowed_ips: [] },
    "the grace period, the old token's new end and the allow-list carried over (none)",
  );
  t.match(creation, {
    sequence: 1,
    action: 'token.created',
    token_id: old.id,
    related_token_id: null,
    occurred_at: createdAt.toISOString(),
    client_ip: '198.51.100.7',
    user_agent: 'partner-console/1.0',
    request_id: 'req-create-1',
  });
  t.strictSame(
    creation.details,
    {
      name: 'Partner ERP',
      scopes: ['utilization', 'users'],
      cooling_unit_ids: [a.unitIds[1], a.unitIds[0]],
      allowed_ips: [],
      expires_at: expiresAt,
    },
    'what the creation set',
  );
  t.equal(created.headers['x-request-id'], 'req-create-1', 'the request id is the one the answer carried');
});

t.test('the events chain: each names the hash of the one before, the first none', async (t) => {
  const [third, second, first] = (await listEvents(world, a.jwt)).data as [AuditEventJson, AuditEventJson, AuditEventJson];
  for (const event of [first, second, third]) t.match(event.hash, /^[0-9a-f]{64}$/, `event ${event.sequence}: a SHA-256`);
  t.equal(first.prev_hash, null);
  t.equal(second.prev_hash, first.hash);
  t.equal(third.prev_hash, second.hash);
  t.equal(new Set([first.hash, second.hash, third.hash]).size, 3, 'three different hashes');
});

t.test('the token_id filter follows a token either way round its rotation', async (t) => {
  const ofOld = await listEvents(world, a.jwt, `?token_id=${old.id}`);
  t.strictSame(
    ofOld.data.map((event) => event.action),
    ['token.rotated', 'token.created'],
    'the old token: created, then rotated',
  );
  const ofNew = await listEvents(world, a.jwt, `?token_id=${replacement.id.toUpperCase()}`);
  t.strictSame(
    ofNew.data.map((event) => event.action),
    ['token.revoked', 'token.rotated'],
    'the replacement: born of the rotation, then revoked (id in any case)',
  );
  t.strictSame(
    ofNew.meta.filters,
    { token_id: replacement.id, action: null, from: null, to: null },
    'the filter echoed as the database spells the id',
  );
  const other = await world.createToken(a.jwt, { name: 'unrelated' });
  const none = await listEvents(world, a.jwt, `?token_id=${other.id}&action=token.revoked`);
  t.strictSame(none.data, [], 'a token of the company with no such event: an empty page, not 404');
});

t.test('action, from and to narrow the list; from is inclusive, to exclusive', async (t) => {
  t.strictSame(
    (await listEvents(world, a.jwt, '?action=token.rotated')).data.map((event) => event.token_id),
    [old.id],
  );
  const window = await listEvents(
    world,
    a.jwt,
    `?from=${encodeURIComponent(rotatedAt.toISOString())}&to=${encodeURIComponent(revokedAt.toISOString())}`,
  );
  t.strictSame(
    window.data.map((event) => event.action),
    ['token.rotated'],
    'the rotation is at from; the revoke at to is out',
  );
  t.strictSame(window.meta.filters, { token_id: null, action: null, from: rotatedAt.toISOString(), to: revokedAt.toISOString() });
  // seconds may go (ISO 8601), any zone: the filter is echoed in UTC
  const zoned = await listEvents(world, a.jwt, `?from=${encodeURIComponent('2000-01-01T01:00+01:00')}`);
  t.equal(zoned.meta.filters.from, '2000-01-01T00:00:00.000Z');
  t.ok(zoned.data.length >= 3);
  t.strictSame(
    (await listEvents(world, a.jwt, `?to=${encodeURIComponent(createdAt.toISOString())}`)).data,
    [],
    'nothing before the first event',
  );
});

t.test('pages in the envelope, newest first across pages', async (t) => {
  const all = await listEvents(world, a.jwt);
  const total = all.meta.pagination.total_count;
  t.equal(all.meta.company_id, a.companyId);
  const first = await listEvents(world, a.jwt, '?page_size=2');
  const second = await listEvents(world, a.jwt, '?page_size=2&page=2');
  t.strictSame(
    [...first.data, ...second.data].map((event) => event.sequence),
    all.data.slice(0, 4).map((event) => event.sequence),
  );
  t.match(first.meta.pagination, {
    page: 1,
    page_size: 2,
    total_count: total,
    total_pages: Math.ceil(total / 2),
    has_next: true,
    has_previous: false,
  });
  t.strictSame((await listEvents(world, a.jwt, '?page=1000')).data, [], 'past the last page: empty');
  const sequences = all.data.map((event) => event.sequence);
  t.strictSame(
    sequences,
    [...sequences].sort((x, y) => y - x),
    'descending sequence',
  );
});

t.test("without a trusted proxy, X-Forwarded-For is not believed: the socket's address is recorded", async (t) => {
  const direct = await createTestApp(t, {}, { database: world.db });
  const response = await direct.app.inject({
    method: 'POST',
    url: BASE,
    payload: { name: 'direct', scopes: ['users'] },
    headers: { authorization: `Bearer ${a.jwt}`, 'x-forwarded-for': '203.0.113.99', 'user-agent': 'x' },
  });
  t.equal(response.statusCode, 201);
  const id = response.json<CreatedToken>().id;
  const [event] = (await listEvents(world, a.jwt, `?token_id=${id}`)).data;
  t.equal(event!.client_ip, '127.0.0.1');
});

t.test('a long User-Agent is kept to 512 characters; none sent is null', async (t) => {
  const long = `agent/${'é'.repeat(600)}`;
  const kept = await world.post(a.jwt, BASE, { name: 'long agent', scopes: ['users'] }, { 'user-agent': long });
  t.equal((await listEvents(world, a.jwt, `?token_id=${kept.json<CreatedToken>().id}`)).data[0]!.user_agent, long.slice(0, 512));
  const none = await world.app.inject({
    method: 'POST',
    url: BASE,
    payload: { name: 'no agent', scopes: ['users'] },
    headers: { authorization: `Bearer ${a.jwt}`, 'user-agent': '' },
  });
  t.equal((await listEvents(world, a.jwt, `?token_id=${none.json<CreatedToken>().id}`)).data[0]!.user_agent, null);
});

t.test('the route is in the OpenAPI document', async (t) => {
  const document = (await world.app.inject({ url: '/openapi.json' })).json<{
    paths: Record<string, { get?: { parameters?: Array<{ name: string }> } }>;
  }>();
  t.strictSame(document.paths[EVENTS]?.get?.parameters?.map((parameter) => parameter.name).sort(), [
    'action',
    'from',
    'page',
    'page_size',
    'to',
    'token_id',
  ]);
});
