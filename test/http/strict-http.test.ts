// What a lenient HTTP stack would let through silently, refused in the service's error shape:
// two Authorization headers, a JSON key given twice, a lone surrogate in a body, query or path,
// and a known path asked with the wrong method (405 with Allow, not 404). Each refusal changes
// nothing and is counted by the rate limits like any other refused request.
import net from 'node:net';
import t from 'tap';
import { createTestApp } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { issueToken } from '../helpers/tokens.js';

/** One raw HTTP/1.1 exchange: headers exactly as given, duplicates included. */
async function raw(address: string, lines: string[], body = ''): Promise<{ status: number; headers: string; body: string }> {
  const { port } = new URL(address);
  const socket = net.connect(Number(port), '127.0.0.1');
  const request = [...lines, 'Host: localhost', 'Connection: close', `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n');
  socket.write(request); // not end(): a half-closed client may lose a response the server is still preparing
  let text = '';
  for await (const chunk of socket) text += chunk;
  const [head = '', ...rest] = text.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), headers: head, body: rest.join('\r\n\r\n') };
}

t.test('strict HTTP', async (t) => {
  const ctx = await createTestApp(t, {}, { realRateLimits: true });
  const acme = await createCompany(ctx.db.pool, 'Strict Co');
  const jwt = await ctx.jwtFor(acme.employeeId);
  const token = await issueToken(ctx, acme.employeeId);
  const address = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  const tokenCount = async () => (await ctx.db.pool.query('SELECT count(*)::int AS n FROM api_tokens')).rows[0].n as number;

  await t.test('two Authorization headers: 400 naming the header, on data and management routes', async (t) => {
    for (const path of ['/api/v1/analytics/users', '/api/v1/api-tokens']) {
      const credential = path.includes('analytics') ? token.token : jwt;
      const reply = await raw(address, [`GET ${path} HTTP/1.1`, `Authorization: Bearer ${credential}`, 'Authorization: Bearer other']);
      t.equal(reply.status, 400, `${path}: 400`);
      t.match(JSON.parse(reply.body), { error: { code: 'invalid_request', details: { field: 'authorization' } } });
      const one = await raw(address, [`GET ${path} HTTP/1.1`, `Authorization: Bearer ${credential}`]);
      t.equal(one.status, 200, `${path}: one header is fine`);
    }
  });

  await t.test('a JSON key given twice: 400 naming it, nothing created', async (t) => {
    const before = await tokenCount();
    const bodies: Array<[string, string]> = [
      ['{"name":"a","scopes":["users"],"scopes":["users","revenue","impact"],"cooling_unit_ids":[]}', 'scopes'],
      ['{"name":"a","name":"b","scopes":["users"]}', 'name'],
    ];
    for (const [body, key] of bodies) {
      const reply = await ctx.app.inject({
        method: 'POST',
        url: '/api/v1/api-tokens',
        headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
        payload: body,
      });
      t.equal(reply.statusCode, 400, body);
      t.match(reply.json(), {
        error: { code: 'invalid_request', message: new RegExp(`"${key}" is given more than once`), details: { field: key } },
      });
    }
    const validate = await ctx.app.inject({
      method: 'POST',
      url: '/v1/users/validate-cooling-user-id/',
      headers: { 'content-type': 'application/json' },
      payload: '{"cooling_user_id":"x","cooling_user_id":"y"}',
    });
    t.equal(validate.statusCode, 400, 'the public validate endpoint too');
    t.equal(await tokenCount(), before, 'no token was created');
  });

  await t.test('a lone surrogate in any string: 400, nothing stored', async (t) => {
    const before = await tokenCount();
    for (const body of ['{"name":"bad \\ud800 name","scopes":["users"]}', '{"name":"ok","scopes":["users"],"\\udc00":1}']) {
      const reply = await ctx.app.inject({
        method: 'POST',
        url: '/api/v1/api-tokens',
        headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
        payload: body,
      });
      t.equal(reply.statusCode, 400, body);
      t.match(reply.json(), { error: { code: 'invalid_request', message: /lone surrogate/ } });
    }
    t.equal(await tokenCount(), before, 'nothing stored (no U+FFFD name)');
    const emoji = await ctx.app.inject({
      method: 'POST',
      url: '/api/v1/api-tokens',
      headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
      payload: '{"name":"cold \\ud83e\\uddca room","scopes":["users"]}',
    });
    t.equal(emoji.statusCode, 201, 'a surrogate pair (an emoji) is text');
    t.equal(emoji.json().name, 'cold \u{1f9ca} room');
    const query = await ctx.app.inject({ method: 'GET', url: '/api/v1/analytics/users?start_date=%ED%A0%80', headers: token.headers });
    t.equal(query.statusCode, 400, 'an encoded surrogate in the query: 400');
  });

  await t.test('a known path with another method: 405 with Allow; unknown paths stay 404', async (t) => {
    const cases: Array<[string, string, string]> = [
      ['POST', '/api/v1/analytics/users', 'GET, HEAD'],
      ['DELETE', '/api/v1/sensor-data', 'GET, HEAD'],
      ['PUT', '/api/v1/analytics/revenue', 'GET, HEAD'],
      ['DELETE', `/api/v1/api-tokens/${token.id}`, 'GET, HEAD'],
      ['GET', `/api/v1/api-tokens/${token.id}/revoke`, 'POST'],
      ['GET', '/v1/users/validate-cooling-user-id/', 'POST'],
    ];
    for (const [method, url, allow] of cases) {
      const reply = await ctx.app.inject({ method: method as 'GET', url, headers: token.headers });
      t.equal(reply.statusCode, 405, `${method} ${url}`);
      t.equal(reply.headers.allow, allow, `Allow: ${allow}`);
      t.match(reply.json(), { error: { code: 'method_not_allowed', details: { allowed_methods: allow.split(', ') } } });
    }
    t.equal((await ctx.app.inject({ method: 'POST', url: '/api/v1/nothing-here' })).statusCode, 404, 'unknown path: 404');
  });

  await t.test('refusals count against the caller like other refused requests', async (t) => {
    // the public write budget of this client IP (20 a minute): refused requests use it up
    let last = 0;
    for (let i = 0; i < 21; i++) {
      last = (await ctx.app.inject({ method: 'POST', url: '/api/v1/analytics/users', remoteAddress: '203.0.113.9' })).statusCode;
    }
    t.equal(last, 429, 'the 21st 405 from one IP within a minute is 429');
  });
});
