// GET /api/v1/api-tokens/{token_id}, ids that name nothing: always 404 not_found, never 400 or 5xx.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { BASE, createWorld, type ErrorJson } from './setup.js';

const world = await createWorld(t);
const { a } = world;
const existing = await world.createToken(a.jwt);

const NOT_UUIDS = [
  'abc',
  '123',
  '0',
  '-1',
  'null',
  'undefined',
  existing.id.replace(/-/g, ''),
  `{${existing.id}}`,
  `${existing.id}0`,
  existing.id.slice(0, -1),
  `${existing.id.slice(0, -1)}g`,
  ` ${existing.id}`,
  'x'.repeat(101),
  'x'.repeat(200),
  existing.token,
];

t.test('an unknown UUID is 404 not_found', async (t) => {
  for (const id of [randomUUID(), '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff']) {
    const response = await world.get(a.jwt, `${BASE}/${id}`);
    t.equal(response.statusCode, 404, id);
    t.strictSame(Object.keys(response.json<ErrorJson>()), ['error']);
    t.equal(response.json<ErrorJson>().error.code, 'not_found');
  }
});

t.test('an id that is not a UUID is 404 too (a malformed id names no token)', async (t) => {
  for (const id of NOT_UUIDS) {
    const response = await world.get(a.jwt, `${BASE}/${encodeURIComponent(id)}`);
    t.equal(response.statusCode, 404, `${id.slice(0, 40)} (${id.length} chars)`);
    t.equal(response.json<ErrorJson>().error?.code, 'not_found');
  }
});

// Fastify answers these two before routing; the app's `frameworkErrors` gives them the one body.

t.test('an id too long for the router is a 4xx, never a 5xx', async (t) => {
  const response = await world.get(a.jwt, `${BASE}/${'x'.repeat(5000)}`);
  t.ok(response.statusCode >= 400 && response.statusCode < 500, `status ${response.statusCode}`);
  t.ok(response.body.length < 1000, 'the path is not echoed back in full');
  t.type(response.json<ErrorJson>().error?.code, 'string', 'the one error shape');
});

t.test('odd encodings in the id never produce a 5xx', async (t) => {
  for (const raw of ['%00', '%F0%9F%8C%BD', '..%2F..%2Fetc%2Fpasswd', '%2e%2e', '%20', 'a%3Bb', '%27', '%5C']) {
    const response = await world.get(a.jwt, `${BASE}/${raw}`);
    t.equal(response.statusCode, 404, raw);
    t.equal(response.json<ErrorJson>().error?.code, 'not_found', `${raw}: code`);
  }
  for (const raw of ['%zz', '%E0%A4%A', '%']) {
    const response = await world.get(a.jwt, `${BASE}/${raw}`);
    t.ok(response.statusCode >= 400 && response.statusCode < 500, `${raw}: ${response.statusCode}`);
    t.type(response.json<ErrorJson>().error?.code, 'string', `${raw}: the one error shape`);
  }
});

t.test('the 404 body is the same for every kind of miss', async (t) => {
  const bodies = new Set<string>();
  for (const id of [randomUUID(), 'abc', 'x'.repeat(150)]) {
    bodies.add((await world.get(a.jwt, `${BASE}/${id}`)).body);
  }
  t.equal(bodies.size, 1, [...bodies].join(' | '));
});
