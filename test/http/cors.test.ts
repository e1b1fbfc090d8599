// No CORS: the data API is server-to-server (API tokens must never sit in browser code) and the
// console is served from the same origin, so no response allows another origin, and a preflight
// is refused like any other method the path does not take.
import t from 'tap';
import { createTestApp } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { issueToken } from '../helpers/tokens.js';

t.test('no response lets another origin read it', async (t) => {
  const ctx = await createTestApp(t);
  const acme = await createCompany(ctx.db.pool, 'Cors Co');
  const token = await issueToken(ctx, acme.employeeId);
  const origin = { origin: 'https://evil.example' };
  for (const [method, url, headers] of [
    ['GET', '/api/v1/analytics/users', token.headers],
    ['GET', '/api/v1/api-tokens', { authorization: `Bearer ${await ctx.jwtFor(acme.employeeId)}` }],
    ['GET', '/openapi.json', {}],
  ] as const) {
    const reply = await ctx.app.inject({ method, url, headers: { ...headers, ...origin } });
    t.equal(reply.statusCode, 200, `${url}: answered`);
    t.notOk(reply.headers['access-control-allow-origin'], `${url}: no Access-Control-Allow-Origin`);
  }
  const preflight = await ctx.app.inject({
    method: 'OPTIONS',
    url: '/api/v1/analytics/users',
    headers: { ...origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
  });
  t.equal(preflight.statusCode, 405, 'a preflight is refused (405: the path takes GET)');
  t.notOk(preflight.headers['access-control-allow-origin'], 'without CORS headers');
  t.notOk(preflight.headers['access-control-allow-headers']);
});
