// GET /api/v1/api-tokens, refused query strings: 400 invalid_request naming the parameter, and
// no query string at all produces a 5xx.
import t, { type Test } from 'tap';
import { BASE, createWorld, seededRandom, type ErrorJson } from './setup.js';

const world = await createWorld(t);
const { a } = world;
await world.createToken(a.jwt);

async function expectInvalid(t: Test, query: string, field: string) {
  const response = await world.get(a.jwt, `${BASE}?${query}`);
  t.equal(response.statusCode, 400, `${query}: status`);
  const body = response.json<ErrorJson>();
  t.equal(body.error?.code, 'invalid_request', `${query}: code`);
  t.equal(body.error?.details?.field, field, `${query}: details.field`);
  t.type(body.error?.message, 'string', `${query}: message`);
}

t.test('page', async (t) => {
  for (const query of [
    'page=0',
    'page=-1',
    'page=abc',
    'page=1.5',
    'page=1e2',
    'page=',
    'page=%20',
    'page=0x10',
    'page=2147483648',
    'page=99999999999',
    'page=1&page=2',
    'page=+1',
  ]) {
    await expectInvalid(t, query, 'page');
  }
});

t.test('page_size', async (t) => {
  for (const query of [
    'page_size=0',
    'page_size=1001',
    'page_size=-5',
    'page_size=ten',
    'page_size=10.0',
    'page_size=10&page_size=10',
    'page_size=',
  ]) {
    await expectInvalid(t, query, 'page_size');
  }
});

t.test('state', async (t) => {
  for (const query of ['state=bogus', 'state=ACTIVE', 'state=', 'state=active&state=revoked', 'state=active,revoked', "state=active'--"]) {
    await expectInvalid(t, query, 'state');
  }
  const response = await world.get(a.jwt, `${BASE}?state=bogus`);
  t.match(response.json<ErrorJson>().error.message, /active.*expired.*revoked/, 'the message lists the states');
});

t.test('unknown parameters are refused and named', async (t) => {
  for (const name of ['pagesize', 'limit', 'offset', 'company_id', 'sort', 'token', 'States', 'constructor', 'toString']) {
    await expectInvalid(t, `${name}=1`, name);
  }
  await expectInvalid(t, 'page=1&page_size=10&cursor=abc', 'cursor');
  await expectInvalid(t, 'page[]=1', 'page[]');
});

t.test('the error body is the one error shape', async (t) => {
  const response = await world.get(a.jwt, `${BASE}?page=0`);
  const body = response.json<ErrorJson>();
  t.strictSame(Object.keys(body), ['error']);
  t.strictSame(Object.keys(body.error).sort(), ['code', 'details', 'message']);
  t.notMatch(response.body, /ZodError|stack|at Object|node_modules/, 'no internals');
});

t.test('fuzz: random query strings never yield a 5xx', async (t) => {
  const random = seededRandom(424_242);
  const pieces = [
    'page',
    'page_size',
    'state',
    '__proto__',
    'constructor',
    'prototype',
    'a[b]',
    'page[0]',
    '%00',
    '%zz',
    '&',
    '=',
    '[]',
    '%5B%5D',
  ];
  const values = [
    '1',
    '0',
    '-1',
    'active',
    'expired',
    '%00',
    '%F0%9F%8C%BD',
    '1e308',
    'NaN',
    'Infinity',
    '9'.repeat(400),
    '',
    "'",
    '%27%3B',
    '%E0%A4%A',
  ];
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const failures: string[] = [];
  for (let round = 0; round < 300; round++) {
    const parts = Array.from({ length: 1 + Math.floor(random() * 4) }, () => `${pick(pieces)}=${pick(values)}`);
    const url = `${BASE}?${parts.join('&')}`;
    const response = await world.get(a.jwt, url);
    if (response.statusCode >= 500 || ![200, 400].includes(response.statusCode)) {
      failures.push(`${response.statusCode} for ${url.slice(0, 200)}: ${response.body.slice(0, 200)}`);
    }
  }
  t.strictSame(failures, [], 'every response is 200 or 400');
});
