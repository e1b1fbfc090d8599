// POST /api/v1/api-tokens, refused input: every bad body is a 400 invalid_request naming the
// field (or a 413/415), nothing is created, and no input at all produces a 5xx.
import t, { type Test } from 'tap';
import { BASE, createWorld, randomJson, randomTimestampLike, seededRandom, type ErrorJson } from './setup.js';

const world = await createWorld(t);
const { a, b } = world;
const valid = { name: 'Partner ETL', scopes: ['users'] };

type Tap = Test;

/** Sends `payload` (an object, or a raw JSON string) and expects 400 naming `field`, with no row created. */
async function expectInvalid(t: Tap, payload: unknown, field: string, label = JSON.stringify(payload)?.slice(0, 80)) {
  const before = await world.tokenCount();
  const response =
    typeof payload === 'string'
      ? await world.post(a.jwt, BASE, payload, { 'content-type': 'application/json' })
      : await world.post(a.jwt, BASE, payload);
  const body = response.json<ErrorJson>();
  t.equal(response.statusCode, 400, `${label}: status`);
  t.equal(body.error?.code, 'invalid_request', `${label}: code`);
  t.equal(body.error?.details?.field, field, `${label}: details.field`);
  t.type(body.error?.message, 'string', `${label}: message`);
  t.equal(await world.tokenCount(), before, `${label}: nothing created`);
}

t.test('a body that is not a JSON object', async (t) => {
  await expectInvalid(t, '{"name": "x", "scopes": ["users"]', 'body', 'truncated JSON');
  await expectInvalid(t, "{'name': 'x'}", 'body', 'single quotes');
  await expectInvalid(t, '{"name": "x",}', 'body', 'trailing comma');
  await expectInvalid(t, '', 'body', 'empty body');
  for (const raw of ['null', '[]', '"Partner ETL"', '42', 'true', '[{"name":"x","scopes":["users"]}]']) {
    await expectInvalid(t, raw, 'body', raw);
  }
});

t.test('objects that pretend to be arrays or strings (a `length` key) are type errors, not crashes', async (t) => {
  // zod runs its length checks on anything with a `length`; a length that cannot be compared
  // once made the validator throw, which Fastify turns into a 500
  const hostile = [{ length: [{ toString: 1 }] }, { length: { valueOf: 1 } }, { length: 2, 0: 'users', 1: 'impact' }, { length: null }];
  for (const value of hostile) {
    await expectInvalid(t, { ...valid, name: value }, 'name');
    await expectInvalid(t, { ...valid, scopes: value }, 'scopes');
    await expectInvalid(t, { ...valid, cooling_unit_ids: value }, 'cooling_unit_ids');
    await expectInvalid(t, { ...valid, expires_at: value }, 'expires_at');
  }
});

t.test('required fields', async (t) => {
  await expectInvalid(t, {}, 'name');
  await expectInvalid(t, { scopes: ['users'] }, 'name');
  await expectInvalid(t, { name: 'x' }, 'scopes');
  await expectInvalid(t, { name: 'x', scopes: null }, 'scopes');
});

t.test('wrong types, field by field', async (t) => {
  for (const name of [1, true, null, [], ['x'], {}, { value: 'x' }]) {
    await expectInvalid(t, { ...valid, name }, 'name');
  }
  for (const scopes of ['users', 1, true, {}, [1], [null], [['users']], [{ scope: 'users' }]]) {
    await expectInvalid(t, { ...valid, scopes }, 'scopes');
  }
  for (const ids of ['1', 1, true, {}, null, ['1'], [true], [null], [[1]], [{ id: 1 }]]) {
    await expectInvalid(t, { ...valid, cooling_unit_ids: ids }, 'cooling_unit_ids');
  }
  for (const expiresAt of [1893456000, 1893456000000, true, {}, [], ['2099-01-01T00:00:00Z']]) {
    await expectInvalid(t, { ...valid, expires_at: expiresAt }, 'expires_at');
  }
});

t.test('name: empty, blank, too long, control characters, huge', async (t) => {
  await expectInvalid(t, { ...valid, name: '' }, 'name');
  await expectInvalid(t, { ...valid, name: '   ' }, 'name');
  await expectInvalid(t, { ...valid, name: '\t\n \r' }, 'name');
  await expectInvalid(t, { ...valid, name: 'n'.repeat(101) }, 'name', '101 characters');
  await expectInvalid(t, { ...valid, name: '🌽'.repeat(101) }, 'name', '101 characters outside the BMP');
  await expectInvalid(t, { ...valid, name: ` ${'n'.repeat(101)} ` }, 'name', '101 characters between spaces');
  for (const control of ['\u0000', '\u0001', '\u0007', '\u001b', '\u007f', '\u0085', '\n', '\t', '\r']) {
    await expectInvalid(t, { ...valid, name: `bad${control}name` }, 'name', `control U+${control.charCodeAt(0).toString(16)}`);
  }
  await expectInvalid(t, { ...valid, name: 'x'.repeat(60 * 1024) }, 'name', '60 KB name');
  await expectInvalid(t, { ...valid, name: '🌽'.repeat(15_000) }, 'name', '60 KB of four-byte characters');
});

t.test('unknown fields are refused and named, typos first', async (t) => {
  await expectInvalid(t, { name: 'x', scope: ['users'] }, 'scope', 'typo scope (no scopes)');
  await expectInvalid(t, { ...valid, scope: ['users'] }, 'scope', 'typo scope next to scopes');
  await expectInvalid(t, { name: '', scope: 'users', cooling_unit_ids: 'x' }, 'scope', 'typo reported before the other errors');
  for (const key of ['company_id', 'token', 'token_hash', 'id', 'revoked', 'created_by', 'last_used_at', 'expiresAt', 'Name']) {
    await expectInvalid(t, { ...valid, [key]: 1 }, key);
  }
});

t.test('__proto__ and constructor keys are refused without polluting anything', async (t) => {
  const before = await world.tokenCount();
  for (const raw of [
    '{"name":"x","scopes":["users"],"__proto__":{"polluted":true}}',
    '{"name":"x","scopes":["users"],"__proto__":{}}',
    '{"name":"x","scopes":["users"],"constructor":{"prototype":{"polluted":true}}}',
  ]) {
    const response = await world.post(a.jwt, BASE, raw, { 'content-type': 'application/json' });
    t.equal(response.statusCode, 400, raw);
    const error = response.json<ErrorJson>().error;
    t.equal(error.code, 'invalid_request');
    t.type(error.details?.field, 'string', 'details.field is present');
  }
  // a plain `constructor` key survives the parser's guard and is an unknown field like any other
  await expectInvalid(t, '{"name":"x","scopes":["users"],"constructor":1}', 'constructor');
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched');
  t.equal(await world.tokenCount(), before, 'nothing created');
});

t.test('scopes: empty, duplicated, unknown', async (t) => {
  await expectInvalid(t, { ...valid, scopes: [] }, 'scopes', 'empty');
  await expectInvalid(t, { ...valid, scopes: ['users', 'users'] }, 'scopes', 'duplicate');
  await expectInvalid(t, { ...valid, scopes: ['users', 'revenue', 'users'] }, 'scopes', 'duplicate, not adjacent');
  for (const scope of ['admin', 'USERS', 'sensor-data', 'users ', '', '*']) {
    await expectInvalid(t, { ...valid, scopes: ['revenue', scope] }, 'scopes', `unknown scope ${JSON.stringify(scope)}`);
  }
  await expectInvalid(t, { ...valid, scopes: Array.from({ length: 5000 }, () => 'users') }, 'scopes', '5000 scopes');
});

t.test('cooling_unit_ids: duplicates, non-integers, out of range, foreign, deleted, unknown', async (t) => {
  const [u1, u2] = a.unitIds as [number, number];
  const cases: Array<[string, unknown]> = [
    ['duplicate', [u1, u2, u1]],
    ['fraction', [u1 + 0.5]],
    ['negative', [-u1]],
    ['zero', [0]],
    ['2^31', [2 ** 31]],
    ['2^53 + 2', [2 ** 53 + 2]],
    ['1e308', [1e308]],
    ['string digits', [String(u1)]],
    ['another company’s unit', [u1, b.unitIds[0]]],
    ['a deleted unit of the company', [a.deletedUnitId]],
    ['a unit that does not exist', [2_000_000_000]],
    ['max int, no such unit', [2 ** 31 - 1]],
    ['1001 units', Array.from({ length: 1001 }, (_, i) => i + 1)],
  ];
  for (const [label, ids] of cases) {
    await expectInvalid(t, { ...valid, cooling_unit_ids: ids }, 'cooling_unit_ids', label);
  }
});

t.test('cooling_unit_ids errors name the unit, not its owner', async (t) => {
  const foreign = b.unitIds[0]!;
  const response = await world.post(a.jwt, BASE, { ...valid, cooling_unit_ids: [foreign] });
  const deleted = await world.post(a.jwt, BASE, { ...valid, cooling_unit_ids: [a.deletedUnitId] });
  const missing = await world.post(a.jwt, BASE, { ...valid, cooling_unit_ids: [2_000_000_000] });
  const message = (r: typeof response) => r.json<ErrorJson>().error.message;
  t.notMatch(message(response), /Beta|company B|belongs to/i, 'the other company is not revealed');
  t.equal(
    message(response).replace(String(foreign), '#'),
    message(missing).replace('2000000000', '#'),
    'a foreign unit reads exactly like a unit that does not exist',
  );
  t.equal(message(deleted).replace(String(a.deletedUnitId), '#'), message(missing).replace('2000000000', '#'), 'and so does a deleted one');
});

t.test('expires_at: past, now, malformed, no zone, impossible dates', async (t) => {
  const now = world.clock.now();
  const iso = (offsetMs: number) => new Date(now.getTime() + offsetMs).toISOString();
  const cases: Array<[string, unknown]> = [
    ['one second ago', iso(-1000)],
    ['one millisecond ago', iso(-1)],
    ['exactly now', iso(0)],
    ['long ago', '2001-01-01T00:00:00Z'],
    ['year 0000', '0000-01-01T00:00:00Z'],
    ['a date only', '2099-01-01'],
    ['no zone', '2099-01-01T00:00:00'],
    ['no zone, fractional', '2099-01-01T00:00:00.000'],
    ['minutes, no zone', '2099-01-01T00:00'],
    ['hours only', '2099-01-01T00Z'],
    ['lower-case t and z', '2099-01-01t00:00:00z'],
    ['space instead of T', '2099-01-01 00:00:00Z'],
    ['offset without colon', '2099-01-01T00:00:00+0200'],
    ['offset out of range', '2099-01-01T00:00:00+25:00'],
    ['February 30th', '2027-02-30T00:00:00Z'],
    ['February 29th of a common year', '2027-02-29T00:00:00Z'],
    ['April 31st', '2099-04-31T00:00:00Z'],
    ['month 13', '2099-13-01T00:00:00Z'],
    ['day 00', '2099-01-00T00:00:00Z'],
    ['hour 24', '2099-01-01T24:00:00Z'],
    ['second 60', '2099-01-01T23:59:60Z'],
    ['words', 'next tuesday'],
    ['empty string', ''],
    ['epoch seconds as a string', '4102444800'],
    ['RFC 2822', 'Fri, 01 Jan 2100 00:00:00 GMT'],
    ['trailing garbage', '2099-01-01T00:00:00Z; DROP TABLE api_tokens'],
    ['six-digit year', '+275760-09-13T00:00:00Z'],
    ['huge string', '2099-01-01T00:00:00Z'.repeat(3000)],
  ];
  for (const [label, expiresAt] of cases) {
    await expectInvalid(t, { ...valid, expires_at: expiresAt }, 'expires_at', label);
  }
});

t.test('an expiry equal to the clock is refused, one millisecond later is accepted', async (t) => {
  world.clock.advance(1234);
  const now = world.clock.now();
  await expectInvalid(t, { ...valid, expires_at: now.toISOString() }, 'expires_at', 'equal to now');
  await expectInvalid(t, { ...valid, expires_at: now.toISOString().replace('Z', '+00:00') }, 'expires_at', 'equal to now, +00:00');
  const response = await world.post(a.jwt, BASE, { ...valid, expires_at: new Date(now.getTime() + 1).toISOString() });
  t.equal(response.statusCode, 201);
});

t.test('Content-Type other than application/json is 415 unsupported_media_type', async (t) => {
  const json = JSON.stringify(valid);
  const cases: Array<[string, Record<string, string>, string | undefined]> = [
    ['text/plain', { 'content-type': 'text/plain' }, json],
    ['text/plain; charset=utf-8', { 'content-type': 'text/plain; charset=utf-8' }, json],
    ['form', { 'content-type': 'application/x-www-form-urlencoded' }, 'name=x&scopes=users'],
    ['multipart', { 'content-type': 'multipart/form-data; boundary=x' }, '--x\r\n\r\n--x--'],
    ['xml', { 'content-type': 'application/xml' }, '<token/>'],
    ['json look-alike', { 'content-type': 'application/jsonp' }, json],
    ['json suffix type', { 'content-type': 'application/merge-patch+json' }, json],
    ['no content type, JSON body', {}, json],
    ['no content type, no body', {}, undefined],
  ];
  for (const [label, headers, payload] of cases) {
    const before = await world.tokenCount();
    const response = await world.app.inject({
      method: 'POST',
      url: BASE,
      headers: { authorization: `Bearer ${a.jwt}`, ...headers },
      ...(payload === undefined ? {} : { payload }),
    });
    t.equal(response.statusCode, 415, `${label}: status`);
    t.equal(response.json<ErrorJson>().error.code, 'unsupported_media_type', `${label}: code`);
    t.equal(await world.tokenCount(), before, `${label}: nothing created`);
  }
});

t.test('a body over the 64 KB limit is refused without a 5xx', async (t) => {
  const before = await world.tokenCount();
  for (const size of [64 * 1024 + 1, 200 * 1024, 2 * 1024 * 1024]) {
    const payload = JSON.stringify({ ...valid, name: 'x'.repeat(size) });
    const response = await world.post(a.jwt, BASE, payload, { 'content-type': 'application/json' });
    t.ok([400, 413].includes(response.statusCode), `${size} bytes: ${response.statusCode}`);
    t.ok(response.json<ErrorJson>().error.code, 'an error body');
  }
  const response = await world.post(a.jwt, BASE, JSON.stringify({ ...valid, name: 'x'.repeat(70_000) }), {
    'content-type': 'application/json',
  });
  t.equal(response.statusCode, 413);
  t.equal(response.json<ErrorJson>().error.code, 'payload_too_large');
  t.equal(await world.tokenCount(), before, 'nothing created');
});

t.test('fuzz: random JSON in every field never yields a 5xx', async (t) => {
  const random = seededRandom(20_261_121);
  const fields = ['name', 'scopes', 'cooling_unit_ids', 'expires_at'] as const;
  const failures: string[] = [];
  const check = async (payload: unknown) => {
    const response = await world.post(a.jwt, BASE, JSON.stringify(payload), { 'content-type': 'application/json' });
    if (response.statusCode >= 500 || ![201, 400].includes(response.statusCode)) {
      failures.push(`${response.statusCode} for ${JSON.stringify(payload).slice(0, 200)}: ${response.body.slice(0, 200)}`);
    }
  };
  for (let round = 0; round < 60; round++) {
    for (const field of fields) await check({ ...valid, [field]: randomJson(random) });
    await check({ ...valid, expires_at: randomTimestampLike(random) });
    await check({ ...valid, cooling_unit_ids: [a.unitIds[0], randomJson(random)] });
    await check(randomJson(random));
  }
  t.strictSame(failures, [], 'every response is 201 or 400');
});

t.test('fuzz: timestamp-shaped strings, all the way to year 9999 and odd offsets', async (t) => {
  const failures: string[] = [];
  const edge = [
    '9999-12-31T23:59:59Z',
    '9999-12-31T23:59:59-23:59',
    '9999-12-31T23:59:59.999-23:59',
    '2099-12-31T23:59:59.9999999999Z',
    '2099-01-01T00:00:00+23:59',
    '2099-01-01T00:00:00-23:59',
  ];
  for (const expiresAt of edge) {
    const response = await world.post(a.jwt, BASE, { ...valid, expires_at: expiresAt });
    if (response.statusCode >= 500) failures.push(`${expiresAt}: ${response.statusCode} ${response.body.slice(0, 200)}`);
    if (response.statusCode === 201) {
      const { expires_at: answered } = response.json<{ expires_at: string }>();
      if (new Date(answered).getTime() !== new Date(expiresAt).getTime()) failures.push(`${expiresAt} answered as ${answered}`);
    }
  }
  t.strictSame(failures, [], 'no 5xx, and an accepted expiry is answered as the same instant');
});
