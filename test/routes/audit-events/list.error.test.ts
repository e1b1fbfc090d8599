// GET /api/v1/audit-events, refused query strings: 400 invalid_request naming the parameter (an
// unknown one, a bad page, action, from or to, to before from, a parameter given twice); a
// token_id that names no token of the company, or is not a UUID, is 404 like the token routes.
import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import { createWorld, type ErrorJson } from '../api-tokens/setup.js';
import { EVENTS } from './setup.js';

const world = await createWorld(t);
const { a } = world;
const token = await world.createToken(a.jwt);

async function expectInvalid(t: Test, query: string, field: string) {
  const response = await world.get(a.jwt, `${EVENTS}?${query}`);
  t.equal(response.statusCode, 400, `${query}: status`);
  const body = response.json<ErrorJson>();
  t.equal(body.error?.code, 'invalid_request', `${query}: code`);
  t.equal(body.error?.details?.field, field, `${query}: details.field`);
  t.type(body.error?.message, 'string', `${query}: message`);
}

t.test('page and page_size', async (t) => {
  for (const query of ['page=0', 'page=abc', 'page=1&page=2', 'page=2147483648']) await expectInvalid(t, query, 'page');
  for (const query of ['page_size=0', 'page_size=1001', 'page_size=ten']) await expectInvalid(t, query, 'page_size');
});

t.test('action: one of the known actions, once', async (t) => {
  for (const query of [
    'action=bogus',
    'action=created',
    'action=TOKEN.CREATED',
    'action=',
    'action=token.created&action=token.revoked',
    'action=token.created,token.revoked',
  ]) {
    await expectInvalid(t, query, 'action');
  }
  const response = await world.get(a.jwt, `${EVENTS}?action=bogus`);
  t.match(response.json<ErrorJson>().error.message, /token\.created.*token\.rotated.*token\.revoked/, 'the message lists the actions');
});

t.test('from and to: ISO 8601 instants with a zone, on real days, once; to not before from', async (t) => {
  for (const value of [
    '2026-01-01',
    '2026-01-01T00:00:00',
    'yesterday',
    '1767225600',
    '2026-02-30T00:00:00Z',
    '2026-13-01T00:00Z',
    '0000-01-01T00:00Z',
    '2026-01-01T25:00Z',
    '',
  ]) {
    await expectInvalid(t, `from=${encodeURIComponent(value)}`, 'from');
    await expectInvalid(t, `to=${encodeURIComponent(value)}`, 'to');
  }
  await expectInvalid(t, 'from=2026-01-01T00:00Z&from=2026-01-02T00:00Z', 'from');
  await expectInvalid(t, `from=${encodeURIComponent('2026-01-02T00:00Z')}&to=${encodeURIComponent('2026-01-01T23:59:59Z')}`, 'to');
  await expectInvalid(t, `from=${encodeURIComponent('2026-01-01T01:30+01:00')}&to=${encodeURIComponent('2026-01-01T00:00Z')}`, 'to');
  const equal = await world.get(a.jwt, `${EVENTS}?from=2026-01-01T00:00Z&to=${encodeURIComponent('2026-01-01T01:00+01:00')}`);
  t.equal(equal.statusCode, 200, 'to equal to from (in another zone): an empty window, not an error');
});

t.test('token_id given twice is 400', async (t) => {
  await expectInvalid(t, `token_id=${token.id}&token_id=${token.id}`, 'token_id');
});

t.test('unknown parameters are refused and named, before anything else', async (t) => {
  for (const name of ['company_id', 'token', 'actor', 'sort', 'limit', 'tokenId', 'constructor']) await expectInvalid(t, `${name}=1`, name);
  await expectInvalid(t, `token_id=${randomUUID()}&company=2`, 'company');
});

t.test('a token_id that names no token of the company is 404 not_found, like the token routes', async (t) => {
  for (const id of [
    randomUUID(),
    '00000000-0000-0000-0000-000000000000',
    'abc',
    '1',
    token.id.replace(/-/g, ''),
    `${token.id}x`,
    'x'.repeat(300),
    token.token,
    '',
  ]) {
    const response = await world.get(a.jwt, `${EVENTS}?token_id=${encodeURIComponent(id)}`);
    t.equal(response.statusCode, 404, `${id.slice(0, 40)} (${id.length} chars)`);
    t.equal(response.json<ErrorJson>().error.code, 'not_found');
  }
});

t.test('other methods are refused', async (t) => {
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'] as const) {
    const response = await world.app.inject({ method, url: EVENTS, headers: { authorization: `Bearer ${a.jwt}` } });
    t.ok(response.statusCode >= 400 && response.statusCode < 500, `${method}: ${response.statusCode}`);
    t.type(response.json<ErrorJson>().error?.code, 'string', `${method}: an error body`);
  }
});
