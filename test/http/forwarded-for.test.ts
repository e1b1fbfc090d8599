// X-Forwarded-For behind TRUST_PROXY: every entry must be an IP address before it can become
// request.ip (the public rate-limit key and the logged address). Unit cases for the parser, then
// the real app with TRUST_PROXY=127.0.0.1 and requests from 127.0.0.1.
import t, { type Test } from 'tap';
import { MAX_FORWARDED_ENTRIES, normaliseForwardedForHeader, parseForwardedAddress } from '../../src/http/forwarded-for.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const LONG = 'a'.repeat(8000);

t.test('parseForwardedAddress: addresses in, bare addresses out', async (t) => {
  const cases: Array<[string, string | null]> = [
    ['203.0.113.7', '203.0.113.7'],
    ['203.0.113.7:5555', '203.0.113.7'],
    ['203.0.113.7:65535', '203.0.113.7'],
    ['2001:db8::1', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['[2001:db8::1]:443', '2001:db8::1'],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'], // one address, one text: one rate-limit budget
    ['[2001:0db8::0001]:8080', '2001:db8::1'],
    ['::ffff:198.51.100.9', '198.51.100.9'], // IPv4-mapped IPv6 is the IPv4 address
    ['[::ffff:c633:6409]:1', '198.51.100.9'],
    ['::1', '::1'],
    ['not-an-ip', null],
    ['unknown', null],
    [LONG, null],
    ['', null],
    ['203.0.113.7:99999', null],
    ['203.0.113.7:', null],
    ['203.0.113.07', null],
    ['203.0.113', null],
    ['256.0.0.1', null],
    ['[203.0.113.7]', null],
    ['2001:db8::1:443', '2001:db8::1:443'], // a valid IPv6 address (no brackets, so no port)
    ['[2001:db8::1]:', null],
    ['[2001:db8::1', null],
    ['fe80::1%eth0', null], // zone ids mean nothing beyond the host that wrote them
    ['203.0.113.7 198.51.100.1', null],
    ['"203.0.113.7"', null],
    ['localhost', null],
  ];
  for (const [entry, expected] of cases) {
    t.equal(
      parseForwardedAddress(entry),
      expected,
      JSON.stringify(entry.length > 40 ? `${entry.slice(0, 10)}... (${entry.length})` : entry),
    );
  }
});

t.test('normaliseForwardedForHeader: from the right, up to the first junk entry', async (t) => {
  const cases: Array<[string | string[], string | null]> = [
    ['203.0.113.7', '203.0.113.7'],
    ['203.0.113.7, 198.51.100.1', '203.0.113.7, 198.51.100.1'],
    ['[2001:db8::1]:443,203.0.113.7:5555', '2001:db8::1, 203.0.113.7'],
    ['not-an-ip', null],
    ['not-an-ip, 203.0.113.7', '203.0.113.7'],
    ['203.0.113.7, not-an-ip', null], // the nearest entry is junk: nothing left of it is usable
    ['198.51.100.1, junk, 203.0.113.7, 10.0.0.1', '203.0.113.7, 10.0.0.1'],
    [`${LONG}, 203.0.113.7`, '203.0.113.7'],
    [LONG, null],
    ['203.0.113.7,, 198.51.100.1,', '203.0.113.7, 198.51.100.1'], // empty entries skipped, as proxy-addr does
    [' , ', null],
    [['203.0.113.7', 'junk', '198.51.100.1'], '198.51.100.1'], // repeated headers: one list
  ];
  for (const [header, expected] of cases) {
    const label = JSON.stringify(header).slice(0, 80);
    t.equal(normaliseForwardedForHeader(header), expected, label);
  }
  const hops = Array.from({ length: 100 }, (_, i) => `10.0.${Math.floor(i / 256)}.${i % 256}`);
  const kept = normaliseForwardedForHeader(hops.join(', '))!.split(', ');
  t.equal(kept.length, MAX_FORWARDED_ENTRIES, `at most ${MAX_FORWARDED_ENTRIES} entries`);
  t.same(kept, hops.slice(-MAX_FORWARDED_ENTRIES), 'the nearest ones, in order');
});

/** The app with a test route that shows what Fastify made of the request. */
async function appWithIpRoute(t: Test, env: Record<string, string>, realRateLimits = false): Promise<TestApp> {
  const ctx = await createTestApp(t, env, { realRateLimits });
  ctx.app.get('/test/client-ip', async (request) => ({
    ip: request.ip,
    ips: request.ips ?? null,
    header: request.headers['x-forwarded-for'] ?? null,
  }));
  return ctx;
}

async function clientIp(ctx: TestApp, forwardedFor: string | undefined) {
  const response = await ctx.app.inject({
    method: 'GET',
    url: '/test/client-ip',
    remoteAddress: '127.0.0.1',
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  });
  t.equal(response.statusCode, 200);
  return response.json<{ ip: string; ips: string[] | null; header: string | null }>();
}

t.test('behind TRUST_PROXY=127.0.0.1, request.ip is an address or the proxy itself', async (t) => {
  const ctx = await appWithIpRoute(t, { TRUST_PROXY: '127.0.0.1' });
  const cases: Array<[string | undefined, string]> = [
    [undefined, '127.0.0.1'],
    ['not-an-ip', '127.0.0.1'],
    ['[2001:db8::1]:443', '2001:db8::1'],
    ['203.0.113.7:5555', '203.0.113.7'],
    [LONG, '127.0.0.1'],
    ['203.0.113.7', '203.0.113.7'],
    ['2001:DB8::0:1', '2001:db8::1'],
    ['198.51.100.1, 203.0.113.7', '203.0.113.7'], // the first untrusted entry from the right
    ['198.51.100.1, not-an-ip, 127.0.0.1', '127.0.0.1'], // junk behind a trusted hop: the last trusted proxy
    [`${LONG}, 203.0.113.7:1234`, '203.0.113.7'],
  ];
  for (const [forwardedFor, expected] of cases) {
    const seen = await clientIp(ctx, forwardedFor);
    const label = forwardedFor === undefined ? '(no header)' : JSON.stringify(forwardedFor.slice(0, 50));
    t.equal(seen.ip, expected, `${label} -> ${expected}`);
    t.ok(
      seen.ips!.every((ip) => ip.length <= 45),
      'every address in request.ips is an address',
    );
  }

  // the logged address is the normalised one, and the junk is not in the logs at all
  ctx.logs.length = 0;
  await clientIp(ctx, `${'z'.repeat(500)}-junk`);
  const incoming = ctx.logs
    .map((line) => JSON.parse(line) as { msg: string; req?: { remoteAddress: string } })
    .find((line) => line.msg === 'incoming request');
  t.equal(incoming?.req?.remoteAddress, '127.0.0.1', 'the log line has the fallback address');
  t.notOk(
    ctx.logs.some((line) => line.includes('zzzzzzzzzz')),
    'no junk in the logs',
  );
});

t.test('without TRUST_PROXY the header is ignored and left alone', async (t) => {
  const ctx = await appWithIpRoute(t, {});
  const seen = await clientIp(ctx, 'not-an-ip');
  t.equal(seen.ip, '127.0.0.1');
  t.equal(seen.header, 'not-an-ip', 'no rewriting when nothing trusts it');
});

t.test("junk X-Forwarded-For values share the proxy's public budget: no fresh budget per value", async (t) => {
  const ctx = await createTestApp(t, { TRUST_PROXY: '127.0.0.1' }, { realRateLimits: true });
  const statuses: number[] = [];
  for (let i = 0; i < 121; i++) {
    const response = await ctx.app.inject({
      method: 'GET',
      url: '/no/such/path',
      remoteAddress: '127.0.0.1',
      headers: { 'x-forwarded-for': `junk-${i}-${'j'.repeat(i * 10)}` },
    });
    statuses.push(response.statusCode);
    if (i === 120) {
      t.equal(response.statusCode, 429, 'the 121st unauthenticated GET is limited (public_read: 120 a minute)');
      const body = response.json<{ error: { code: string; details: { scope: string } } }>();
      t.equal(body.error.code, 'rate_limited');
      t.equal(body.error.details.scope, 'public_read');
    }
  }
  t.same(new Set(statuses.slice(0, 120)), new Set([404]), 'the first 120 are answered (404)');

  // a real client address behind the proxy still has its own budget
  const other = await ctx.app.inject({
    method: 'GET',
    url: '/no/such/path',
    remoteAddress: '127.0.0.1',
    headers: { 'x-forwarded-for': '203.0.113.7:5555' },
  });
  t.equal(other.statusCode, 404, '203.0.113.7 is counted apart from the proxy');
});
