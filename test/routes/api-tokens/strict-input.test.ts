// Unknown query parameters and body fields are 400 on every management endpoint, as on the data
// endpoints: a typo (`?stat=active`, `{"reason": ...}`) must not be silently ignored.
import t from 'tap';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';
import { issueToken } from '../../helpers/tokens.js';

t.test('unknown query parameters and body fields are refused everywhere', async (t) => {
  const ctx = await createTestApp(t);
  const acme = await createCompany(ctx.db.pool, 'Strict Co');
  const token = await issueToken(ctx, acme.employeeId);
  const auth = { authorization: `Bearer ${await ctx.jwtFor(acme.employeeId)}` };
  const cases: Array<[string, string, string | undefined]> = [
    ['GET', `/api/v1/api-tokens/${token.id}?foo=1`, undefined],
    ['POST', `/api/v1/api-tokens/${token.id}/revoke?foo=1`, undefined],
    ['POST', `/api/v1/api-tokens/${token.id}/rotate?foo=1`, undefined],
    ['GET', '/api/v1/api-tokens?stat=active', undefined],
    ['GET', '/api/v1/cooling-units?pagesize=5', undefined],
  ];
  for (const [method, url] of cases) {
    const reply = await ctx.app.inject({ method: method as 'GET', url, headers: auth });
    t.equal(reply.statusCode, 400, `${method} ${url}`);
    t.match(reply.json(), { error: { code: 'invalid_request', message: /Unknown query parameter/ } });
  }
  const revokeWithBody = await ctx.app.inject({
    method: 'POST',
    url: `/api/v1/api-tokens/${token.id}/revoke`,
    headers: { ...auth, 'content-type': 'application/json' },
    payload: '{"x":1}',
  });
  t.equal(revokeWithBody.statusCode, 400, 'a revoke with an unknown body field');
  t.match(revokeWithBody.json(), { error: { details: { field: 'x' } } });
  t.equal(
    (await ctx.app.inject({ method: 'GET', url: `/api/v1/api-tokens/${token.id}`, headers: auth })).json().revoked,
    false,
    'and nothing was revoked',
  );
  for (const payload of [undefined, '{}']) {
    const headers = payload ? { ...auth, 'content-type': 'application/json' } : auth;
    const reply = await ctx.app.inject({ method: 'POST', url: `/api/v1/api-tokens/${token.id}/revoke`, headers, payload });
    t.equal(reply.statusCode, 200, `a revoke with ${payload ?? 'no body'} is fine`);
  }
});
