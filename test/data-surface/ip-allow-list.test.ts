// IP allow-lists on the data surface, over real HTTP: a token bound to networks answers only
// requests whose address (request.ip, as TRUST_PROXY resolves it) is in one of them; anyone else
// gets 403 ip_not_allowed naming the address the service saw. The check comes after the token is
// known, so an unknown, revoked or expired token stays a 401 from anywhere; a refused request is
// counted against the caller's IP, never against the token's budget.
import t from 'tap';
import { generateToken } from '../../src/tokens/format.js';
import type { ErrorJson } from '../../src/http/schemas.js';
import { createTestApp, type TestAppOptions } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';

const URL_PATH = '/api/v1/analytics/users?page_size=1';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A test app listening on a real port; `host` is where it listens ("::" takes IPv4 too). */
async function serve(env: Record<string, string>, host = '127.0.0.1', options: TestAppOptions = {}) {
  // Redis: the revocation bus and the rate-limit counters are the shared ones, as in production
  const ctx = await createTestApp(t, { REDIS_URL, ...env }, options);
  await ctx.app.listen({ host, port: 0 });
  const { port } = ctx.app.server.address() as { port: number };
  const company = await createCompany(ctx.db.pool, 'Acme');
  const jwt = await ctx.jwtFor(company.employeeId);
  return { ctx, port, company, jwt };
}

type Served = Awaited<ReturnType<typeof serve>>;

async function createToken(served: Served, body: Record<string, unknown>) {
  const response = await fetch(`http://127.0.0.1:${served.port}/api/v1/api-tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${served.jwt}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Partner ETL', scopes: ['users'], ...body }),
  });
  if (response.status !== 201) throw new Error(`create answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as { id: string; token: string; allowed_ips: string[] };
}

/** A data request with `token`, to `host` (127.0.0.1 or [::1]), with extra headers. */
async function data(served: Served, token: string, headers: Record<string, string> = {}, host = '127.0.0.1') {
  const response = await fetch(`http://${host}:${served.port}${URL_PATH}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
  return { status: response.status, headers: response.headers, body: (await response.json()) as ErrorJson };
}

t.test('without TRUST_PROXY: the socket address decides, X-Forwarded-For changes nothing', async (t) => {
  const served = await serve({});
  const bound = await createToken(served, { allowed_ips: ['10.1.0.0/16'] });
  t.strictSame(bound.allowed_ips, ['10.1.0.0/16']);

  const refused = await data(served, bound.token);
  t.equal(refused.status, 403, 'refused from 127.0.0.1');
  t.equal(refused.body.error.code, 'ip_not_allowed');
  t.strictSame(refused.body.error.details, { client_ip: '127.0.0.1' }, 'details name the address the service saw');
  t.match(refused.body.error.message, /127\.0\.0\.1/);
  t.equal(refused.headers.get('www-authenticate'), 'Bearer realm="coldtrack"', 'a Bearer challenge, like every 403 of a token');

  const forwarded = await data(served, bound.token, { 'x-forwarded-for': '10.1.2.3' });
  t.equal(forwarded.status, 403, 'an X-Forwarded-For nobody trusts is ignored');
  t.strictSame(forwarded.body.error.details, { client_ip: '127.0.0.1' });

  const open = await createToken(served, {});
  t.strictSame(open.allowed_ips, [], 'no list: an empty one');
  t.equal((await data(served, open.token)).status, 200, 'a token without a list works from anywhere');

  const local = await createToken(served, { allowed_ips: ['192.0.2.1', '127.0.0.0/8'] });
  t.equal((await data(served, local.token)).status, 200, 'an address in one of the networks is accepted');
  t.equal((await data(served, local.token)).status, 200, 'and again with the token warm in the cache');
  t.equal((await data(served, bound.token)).status, 403, 'a warm token is still checked');
});

t.test('behind a trusted proxy (TRUST_PROXY=127.0.0.1): the forwarded client address decides', async (t) => {
  const served = await serve({ TRUST_PROXY: '127.0.0.1' });
  const bound = await createToken(served, { allowed_ips: ['10.1.0.0/16'] });

  const accepted = await data(served, bound.token, { 'x-forwarded-for': '10.1.2.3' });
  t.equal(accepted.status, 200, 'the proxy says 10.1.2.3: accepted');

  const direct = await data(served, bound.token);
  t.equal(direct.status, 403, 'no header: the proxy itself is the client');
  t.strictSame(direct.body.error.details, { client_ip: '127.0.0.1' });

  const outside = await data(served, bound.token, { 'x-forwarded-for': '10.2.0.1' });
  t.equal(outside.status, 403);
  t.strictSame(outside.body.error.details, { client_ip: '10.2.0.1' });

  // proxy-addr takes the first untrusted entry from the right: an entry the client wrote to the
  // left of it is not believed
  const spoofed = await data(served, bound.token, { 'x-forwarded-for': '10.1.2.3, 203.0.113.9' });
  t.equal(spoofed.status, 403, "an untrusted hop's claim changes nothing");
  t.strictSame(spoofed.body.error.details, { client_ip: '203.0.113.9' });

  const mapped = await data(served, bound.token, { 'x-forwarded-for': '::ffff:10.1.2.3' });
  t.equal(mapped.status, 200, 'IPv4-mapped IPv6 matches the IPv4 network');
});

t.test('behind a trusted proxy, an IPv6 network admits IPv6 clients only: ::/0 and ::/80 refuse every IPv4 client', async (t) => {
  const served = await serve({ TRUST_PROXY: '127.0.0.1' });
  for (const network of ['::/0', '::/80']) {
    const v6only = await createToken(served, { allowed_ips: [network] });
    t.strictSame(v6only.allowed_ips, [network], `${network} is kept as the IPv6 network it is`);
    for (const client of ['203.0.113.7', '::ffff:203.0.113.7', '::ffff:cb00:7107']) {
      const refused = await data(served, v6only.token, { 'x-forwarded-for': client });
      t.equal(refused.status, 403, `${network}: the proxy says ${client}: refused`);
      t.equal(refused.body.error.code, 'ip_not_allowed');
      t.strictSame(refused.body.error.details, { client_ip: '203.0.113.7' }, 'named as the IPv4 client it is');
    }
    const direct = await data(served, v6only.token);
    t.equal(direct.status, 403, `${network}: the proxy itself (127.0.0.1) is refused too`);
    t.equal(
      (await data(served, v6only.token, { 'x-forwarded-for': '::1234:5678:9abc' })).status,
      200,
      `${network}: an IPv6 client in it passes`,
    );
  }
  const everywhere = await createToken(served, { allowed_ips: ['::/0'] });
  t.equal((await data(served, everywhere.token, { 'x-forwarded-for': '2001:db8::7' })).status, 200, '::/0: any IPv6 client passes');

  // IPv4 clients are named in IPv6 notation by their mapped form, which is stored as IPv4
  const mapped = await createToken(served, { allowed_ips: ['::ffff:0:0/96'] });
  t.strictSame(mapped.allowed_ips, ['0.0.0.0/0'], '::ffff:0:0/96 is every IPv4 address');
  t.equal((await data(served, mapped.token, { 'x-forwarded-for': '203.0.113.7' })).status, 200, 'and admits an IPv4 client');
  t.equal((await data(served, mapped.token, { 'x-forwarded-for': '2001:db8::7' })).status, 403, 'but no IPv6 one');
});

t.test('IPv6 networks, and IPv4-mapped addresses on a dual-stack socket', async (t) => {
  const served = await serve({ TRUST_PROXY: '127.0.0.1, ::1' }, '::');
  const v6 = await createToken(served, { allowed_ips: ['2001:DB8:ABCD::/48', '::1'] });
  t.strictSame(v6.allowed_ips, ['2001:db8:abcd::/48', '::1/128'], 'canonical CIDR text');
  t.equal((await data(served, v6.token, { 'x-forwarded-for': '2001:db8:abcd:12::7' })).status, 200, 'inside the /48');
  const outside = await data(served, v6.token, { 'x-forwarded-for': '2001:db8:abce::1' });
  t.equal(outside.status, 403, 'outside the /48');
  t.strictSame(outside.body.error.details, { client_ip: '2001:db8:abce::1' });
  t.equal((await data(served, v6.token, {}, '[::1]')).status, 200, 'straight from ::1 over IPv6');

  // listening on "::", an IPv4 client's socket address is ::ffff:127.0.0.1
  const v4 = await createToken(served, { allowed_ips: ['127.0.0.1'] });
  t.equal((await data(served, v4.token)).status, 200, '::ffff:127.0.0.1 matches 127.0.0.1/32');
  const elsewhere = await createToken(served, { allowed_ips: ['10.1.0.0/16'] });
  const refused = await data(served, elsewhere.token);
  t.equal(refused.status, 403);
  t.strictSame(refused.body.error.details, { client_ip: '127.0.0.1' }, 'named as the IPv4 address it is');
  t.equal((await data(served, v4.token, {}, '[::1]')).status, 403, 'an IPv4-only list refuses an IPv6 client');
});

t.test('an unknown, revoked or expired token is a 401 from any address', async (t) => {
  const served = await serve({});
  const unknown = await data(served, generateToken());
  t.equal(unknown.status, 401, 'unknown: 401, as without lists');
  t.equal(unknown.body.error.code, 'unauthorized');

  const revoked = await createToken(served, { allowed_ips: ['10.1.0.0/16'] });
  const revoke = await fetch(`http://127.0.0.1:${served.port}/api/v1/api-tokens/${revoked.id}/revoke`, {
    method: 'POST',
    headers: { authorization: `Bearer ${served.jwt}` },
  });
  t.equal(revoke.status, 200);
  const afterRevoke = await data(served, revoked.token);
  t.equal(afterRevoke.status, 401, 'revoked: 401, not a 403 that confirms the token and its list');
  t.match(afterRevoke.body.error.message, /revoked/);

  const expiresAt = new Date(served.ctx.clock.now().getTime() + 60_000);
  const expiring = await createToken(served, { allowed_ips: ['10.1.0.0/16'], expires_at: expiresAt.toISOString() });
  served.ctx.clock.set(expiresAt);
  const expired = await data(served, expiring.token);
  t.equal(expired.status, 401);
  t.match(expired.body.error.message, /expired/);
  served.ctx.clock.set(new Date());
});

t.test("a refused request is counted against the caller's IP, not the token's budget", async (t) => {
  const served = await serve({ TRUST_PROXY: '127.0.0.1' }, '127.0.0.1', { realRateLimits: true });
  const bound = await createToken(served, { allowed_ips: ['10.1.0.0/16'] });
  const budget = Number((await data(served, bound.token, { 'x-forwarded-for': '10.1.2.3' })).headers.get('x-ratelimit-limit'));
  t.ok(budget > 3, 'the token has a budget');

  for (let i = 0; i < 3; i++) {
    const refused = await data(served, bound.token, { 'x-forwarded-for': '203.0.113.9' });
    t.equal(refused.status, 403);
    t.equal(Number(refused.headers.get('x-ratelimit-remaining')), 120 - 1 - i, "the caller's public budget (120 a minute) goes down");
  }
  const allowed = await data(served, bound.token, { 'x-forwarded-for': '10.1.2.3' });
  t.equal(allowed.status, 200);
  t.equal(
    Number(allowed.headers.get('x-ratelimit-remaining')),
    budget - 2,
    'the token spent two requests: the refused ones are not among them',
  );
});
