// The allow-list's two halves on their own: an entry's canonical CIDR text (or why it is none),
// and the match of request.ip against the compiled list, including what request.ip can be that is
// not a plain address (a dual-stack socket's ::ffff: form, a zone id, a socket already gone).
// The HTTP behaviour is in test/data-surface/ip-allow-list.test.ts and test/routes/api-tokens/allowed-ips.test.ts.
import t from 'tap';
import { addressSeen, compileAllowList, isAddressAllowed, parseAllowedIp } from '../../src/tokens/allowed-ips.js';

t.test('every spelling of one network has one text; IPv6 RFC 5952, mapped IPv4 as IPv4', async (t) => {
  const cases: Array<[string, string]> = [
    ['10.1.2.3', '10.1.2.3/32'],
    ['10.1.2.3/32', '10.1.2.3/32'],
    ['10.1.0.0/16', '10.1.0.0/16'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['128.0.0.0/1', '128.0.0.0/1'],
    ['255.255.255.255', '255.255.255.255/32'],
    ['2001:DB8::', '2001:db8::/128'],
    ['2001:db8:0:0:0:0:0:0/32', '2001:db8::/32'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1/128'],
    ['::/0', '::/0'],
    ['::1', '::1/128'],
    ['::ffff:10.1.2.3', '10.1.2.3/32'],
    ['::ffff:10.1.0.0/112', '10.1.0.0/16'],
    ['::FFFF:a01:0/120', '10.1.0.0/24'],
    ['::ffff:0:0/96', '0.0.0.0/0'],
  ];
  for (const [entry, cidr] of cases) t.strictSame(parseAllowedIp(entry), { ok: true, cidr }, `${entry} -> ${cidr}`);
});

t.test('what is refused, and why', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['10.1.2.3/16', /host bits set: "10\.1\.2\.3\/16" \(its network is 10\.1\.0\.0\/16\)/],
    ['1.0.0.0/1', /its network is 0\.0\.0\.0\/1/],
    ['2001:db8::1/64', /its network is 2001:db8::\/64/],
    ['10.0.0.0/33', /prefix length must be 0\.\.32 for IPv4/],
    ['::/129', /prefix length must be 0\.\.128 for IPv6/],
    ['10.0.0.0/08', /not an IP address or CIDR/],
    ['10.0.0.0/-1', /not an IP address or CIDR/],
    ['10.0.0.0/1e1', /not an IP address or CIDR/],
    ['fe80::1%eth0', /not an IP address or CIDR/],
    ['fe80::1%eth0/64', /not an IP address or CIDR/],
    ['[2001:db8::1]', /not an IP address or CIDR/],
    ['10.1.2', /not an IP address or CIDR/],
    ['10.1.2.3/', /not an IP address or CIDR/],
    ['/8', /not an IP address or CIDR/],
    ['x'.repeat(65), /"x{64}…"$/],
  ];
  for (const [entry, problem] of cases) {
    const parsed = parseAllowedIp(entry);
    t.equal(parsed.ok, false, `${entry.slice(0, 20)} refused`);
    if (!parsed.ok) t.match(parsed.problem, problem);
  }
});

t.test('matching: no list allows all; a list allows its networks only', async (t) => {
  t.equal(compileAllowList([]), null, 'an empty list compiles to nothing');
  t.ok(isAddressAllowed(null, '203.0.113.9'));
  t.ok(isAddressAllowed(null, undefined), 'no list: not even the address is looked at');

  const list = compileAllowList(['10.1.0.0/16', '2001:db8::/32', '192.0.2.7/32']);
  const cases: Array<[string | undefined, boolean]> = [
    ['10.1.0.0', true],
    ['10.1.255.255', true],
    ['10.2.0.0', false],
    ['192.0.2.7', true],
    ['192.0.2.8', false],
    ['::ffff:10.1.2.3', true], // a dual-stack socket's IPv4 client
    ['::FFFF:10.1.2.3', true],
    ['::ffff:10.2.2.3', false],
    ['2001:db8:ffff::1', true],
    ['2001:db9::1', false],
    ['fe80::1%eth0', false], // a zone id: not an address anyone can list
    ['not-an-ip', false],
    ['', false],
    [undefined, false], // the socket closed before the check
  ];
  for (const [address, allowed] of cases) t.equal(isAddressAllowed(list, address), allowed, `${String(address)}: ${allowed}`);
});

t.test('families never cross: an IPv6 network admits no IPv4 client, mapped or not', async (t) => {
  // an IPv4 client as request.ip can hold it: plain, mapped dotted, mapped in hex, mapped written out
  const ipv4Client = ['203.0.113.7', '::ffff:203.0.113.7', '::FFFF:cb00:7107', '0:0:0:0:0:ffff:cb00:7107'];
  // each a canonical entry (the text parseAllowedIp gives): ::fffe:0:0/95 holds the mapped range
  for (const entry of ['::/0', '::/80', '::fffe:0:0/95', '::/96']) {
    t.strictSame(parseAllowedIp(entry), { ok: true, cidr: entry }, `${entry} is stored as IPv6`);
    const list = compileAllowList([entry]);
    for (const address of ipv4Client) t.equal(isAddressAllowed(list, address), false, `${entry} refuses ${address}`);
  }
  t.equal(isAddressAllowed(compileAllowList(['::/0']), '2001:db8::7'), true, '::/0 admits any IPv6 client');
  t.equal(isAddressAllowed(compileAllowList(['::/80']), '::1234:5678:9abc'), true, '::/80 admits the IPv6 clients in it');
  t.equal(isAddressAllowed(compileAllowList(['::/80']), '2001:db8::7'), false, 'and no other');

  // the IPv4-mapped spelling of an entry is its IPv4 network: the way to name IPv4 clients in IPv6 notation
  const everyIpv4 = parseAllowedIp('::ffff:0:0/96');
  t.strictSame(everyIpv4, { ok: true, cidr: '0.0.0.0/0' });
  const v4 = compileAllowList([everyIpv4.ok ? everyIpv4.cidr : '']);
  for (const address of ipv4Client) t.equal(isAddressAllowed(v4, address), true, `::ffff:0:0/96 admits ${address}`);
  t.equal(isAddressAllowed(v4, '2001:db8::7'), false, 'and no IPv6 client');
  t.equal(isAddressAllowed(v4, '::1'), false);

  const both = compileAllowList(['203.0.113.0/24', '2001:db8::/32']);
  t.equal(isAddressAllowed(both, '::ffff:cb00:7107'), true, 'a mapped client in hex matches its IPv4 network');
  t.equal(isAddressAllowed(both, '::ffff:cb00:8007'), false, '203.0.128.7 is not in it');
});

t.test('the address a refusal names: a mapped client is named as the IPv4 address it is', async (t) => {
  const cases: Array<[string, string]> = [
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:cb00:7107', '203.0.113.7'],
    ['2001:db8::7', '2001:db8::7'],
    ['::1', '::1'],
    ['fe80::1%eth0', 'fe80::1%eth0'],
    ['not-an-ip', 'not-an-ip'],
  ];
  for (const [address, seen] of cases) t.equal(addressSeen(address), seen, `${address} -> ${seen}`);
});
