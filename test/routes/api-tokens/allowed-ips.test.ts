// A token's IP allow-list on the management surface: set at creation, each entry checked and
// written as canonical CIDR text, shown wherever the token is (create, list, retrieve, rotate),
// carried to a rotation's replacement and recorded in the audit trail. A malformed entry, a
// repeated one or more than 50 is a 400 naming the entry, and creates nothing.
import t from 'tap';
import { BASE, createWorld, type ApiTokenJson, type CreatedToken, type ErrorJson, type ListJson } from './setup.js';

const world = await createWorld(t);
const { a } = world;

const create = (body: Record<string, unknown>) => world.post(a.jwt, BASE, { name: 'Partner ETL', scopes: ['users'], ...body });

/** The details recorded with the token's events, oldest first. */
async function eventDetails(tokenId: string) {
  const { rows } = await world.db.pool.query<{ action: string; details: Record<string, unknown> }>(
    'SELECT action, details FROM token_audit_events WHERE token_id = $1 ORDER BY sequence',
    [tokenId],
  );
  return rows;
}

t.test('entries come back as canonical CIDR text, everywhere the token is shown', async (t) => {
  const given = ['10.1.2.3', '10.1.0.0/16', '2001:DB8:0:0::/32', '2001:db8:1::1', '::ffff:192.0.2.0/120', '0.0.0.0/0'];
  const canonical = ['10.1.2.3/32', '10.1.0.0/16', '2001:db8::/32', '2001:db8:1::1/128', '192.0.2.0/24', '0.0.0.0/0'];
  const response = await create({ allowed_ips: given });
  t.equal(response.statusCode, 201, response.body);
  const created = response.json<CreatedToken>();
  t.strictSame(created.allowed_ips, canonical, 'create: normalised, in the order given');

  const retrieved = (await world.get(a.jwt, `${BASE}/${created.id}`)).json<ApiTokenJson>();
  t.strictSame(retrieved.allowed_ips, canonical, 'retrieve');
  const listed = (await world.get(a.jwt, BASE)).json<ListJson>().data.find((token) => token.id === created.id);
  t.strictSame(listed?.allowed_ips, canonical, 'list');

  const [event] = await eventDetails(created.id);
  t.equal(event?.action, 'token.created');
  t.strictSame(event?.details.allowed_ips, canonical, 'the created event records the list');
});

t.test('absent or empty: any address, shown as []', async (t) => {
  const absent = await world.createToken(a.jwt);
  t.strictSame(absent.allowed_ips, []);
  const empty = await world.createToken(a.jwt, { allowed_ips: [] });
  t.strictSame(empty.allowed_ips, []);
  t.strictSame((await eventDetails(empty.id))[0]?.details.allowed_ips, []);
});

t.test('rotation carries the list to the replacement, and the rotated event shows it', async (t) => {
  const old = await world.createToken(a.jwt, { allowed_ips: ['198.51.100.0/24', '2001:db8::/48'] });
  const response = await world.post(a.jwt, `${BASE}/${old.id}/rotate`, { grace_period_seconds: 0 });
  t.equal(response.statusCode, 201);
  const replacement = response.json<CreatedToken>();
  t.strictSame(replacement.allowed_ips, ['198.51.100.0/24', '2001:db8::/48'], 'the replacement has the same list');
  t.strictSame((await world.get(a.jwt, `${BASE}/${replacement.id}`)).json<ApiTokenJson>().allowed_ips, old.allowed_ips);
  const rotated = (await eventDetails(old.id)).find((event) => event.action === 'token.rotated');
  t.strictSame(rotated?.details.allowed_ips, old.allowed_ips, 'the rotated event records what was carried over');
});

t.test('400 naming the entry at fault; nothing created', async (t) => {
  const cases: Array<[string, unknown[], RegExp]> = [
    ['not an address', ['10.1.0.0/16', 'office-router'], /allowed_ips\.1 is not an IP address or CIDR: "office-router"/],
    ['a host name', ['localhost'], /allowed_ips\.0 is not an IP address or CIDR: "localhost"/],
    ['an octet out of range', ['10.1.2.256'], /"10\.1\.2\.256"/],
    ['a leading zero', ['010.1.2.3'], /"010\.1\.2\.3"/],
    [
      'IPv4 prefix out of range',
      ['10.0.0.0/33'],
      /allowed_ips\.0 is not a CIDR: the prefix length must be 0\.\.32 for IPv4: "10\.0\.0\.0\/33"/,
    ],
    ['IPv6 prefix out of range', ['2001:db8::/129'], /prefix length must be 0\.\.128 for IPv6: "2001:db8::\/129"/],
    ['a prefix that is not a number', ['10.0.0.0/ab'], /"10\.0\.0\.0\/ab"/],
    ['an empty prefix', ['10.0.0.0/'], /"10\.0\.0\.0\/"/],
    ['two prefixes', ['10.0.0.0/8/8'], /"10\.0\.0\.0\/8\/8"/],
    ['host bits set', ['10.1.2.3/16'], /allowed_ips\.0 is a CIDR with host bits set: "10\.1\.2\.3\/16" \(its network is 10\.1\.0\.0\/16\)/],
    ['IPv6 host bits set', ['2001:db8::1/32'], /its network is 2001:db8::\/32/],
    ['a zone id', ['fe80::1%eth0'], /"fe80::1%eth0"/],
    ['a port', ['10.1.2.3:443'], /"10\.1\.2\.3:443"/],
    ['surrounding spaces', [' 10.1.2.3'], /" 10\.1\.2\.3"/],
    ['an empty entry', [''], /allowed_ips\.0 is not an IP address or CIDR: ""/],
    ['a very long entry, cut in the message', ['1'.repeat(10_000)], /allowed_ips\.0 is not an IP address or CIDR: "1{64}…"/],
    ['a number', [167837955], /allowed_ips\.0/],
    ['null', [null], /allowed_ips\.0/],
    ['the same entry twice', ['10.1.2.3', '10.1.0.0/16', '10.1.2.3'], /allowed_ips\.2 is 10\.1\.2\.3\/32 again \(allowed_ips\.0\)/],
    ['one network in two spellings', ['2001:db8::/32', '2001:DB8:0::/32'], /allowed_ips\.1 is 2001:db8::\/32 again \(allowed_ips\.0\)/],
    ['an address and its /32', ['10.1.2.3', '10.1.2.3/32'], /allowed_ips\.1 is 10\.1\.2\.3\/32 again/],
    ['an IPv4 address and its mapped IPv6 form', ['10.1.2.3', '::ffff:10.1.2.3'], /allowed_ips\.1 is 10\.1\.2\.3\/32 again/],
  ];
  const before = await world.tokenCount();
  for (const [label, allowedIps, message] of cases) {
    const response = await create({ allowed_ips: allowedIps });
    t.equal(response.statusCode, 400, `${label}: 400`);
    const { error } = response.json<ErrorJson>();
    t.equal(error.code, 'invalid_request', label);
    t.strictSame(error.details, { field: 'allowed_ips' }, `${label}: details.field`);
    t.match(error.message, message, `${label}: ${error.message}`);
  }
  for (const notAList of ['10.1.0.0/16', null, { 0: '10.1.0.0/16' }]) {
    const response = await create({ allowed_ips: notAList });
    t.equal(response.statusCode, 400, `${JSON.stringify(notAList)} is not a list`);
    t.strictSame(response.json<ErrorJson>().error.details, { field: 'allowed_ips' });
  }
  t.equal(await world.tokenCount(), before, 'nothing created');
});

t.test('at most 50 entries', async (t) => {
  const networks = (count: number) => Array.from({ length: count }, (_, i) => `10.${i}.0.0/16`);
  const before = await world.tokenCount();
  const tooMany = await create({ allowed_ips: networks(51) });
  t.equal(tooMany.statusCode, 400);
  const { error } = tooMany.json<ErrorJson>();
  t.strictSame(error.details, { field: 'allowed_ips' });
  t.match(error.message, /allowed_ips must list at most 50 entries/);
  t.equal(await world.tokenCount(), before, 'nothing created');

  const fifty = await create({ allowed_ips: networks(50) });
  t.equal(fifty.statusCode, 201, '50 is fine');
  t.equal(fifty.json<CreatedToken>().allowed_ips.length, 50);
});

t.test('the database keeps the list as networks, and refuses a malformed one even from SQL', async (t) => {
  const token = await world.createToken(a.jwt, { allowed_ips: ['10.1.0.0/16'] });
  const { rows } = await world.db.pool.query<{ type: string }>(
    'SELECT pg_typeof(allowed_ips)::text AS type FROM api_tokens WHERE id = $1',
    [token.id],
  );
  t.equal(rows[0]?.type, 'cidr[]');
  await t.rejects(
    world.db.pool.query("UPDATE api_tokens SET allowed_ips = '{10.1.2.3/16}' WHERE id = $1", [token.id]),
    /invalid cidr value/,
    'host bits set: refused by the type',
  );
});
