// POST /api/v1/api-tokens, security: who may create, for which company, and where the raw token
// may appear (the creation response only: never the logs, never the database).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import t from 'tap';
import { BASE, createWorld, type ErrorJson } from './setup.js';

const world = await createWorld(t);
const { a, b } = world;
const valid = { name: 'Partner ETL', scopes: ['users', 'revenue'] };

const pgDump = existsSync('/usr/bin/pg_dump') ? '/usr/bin/pg_dump' : 'pg_dump';
const dumpDatabase = async () =>
  (await promisify(execFile)(pgDump, ['--no-owner', '--dbname', world.db.url], { maxBuffer: 64 * 1024 * 1024 })).stdout;

t.test('without a usable JWT: 401 with WWW-Authenticate, nothing created, body not even read', async (t) => {
  const before = await world.tokenCount();
  const cases: Array<[string, Record<string, string>, string]> = [
    ['no Authorization', {}, JSON.stringify(valid)],
    ['garbage bearer', { authorization: 'Bearer not-a-jwt' }, JSON.stringify(valid)],
    ['Basic scheme', { authorization: 'Basic dXNlcjpwYXNz' }, JSON.stringify(valid)],
    ['JWT without scheme', { authorization: a.jwt }, JSON.stringify(valid)],
    ['an invalid body is still 401 first', { authorization: 'Bearer nope' }, '{"scope":'],
  ];
  for (const [label, headers, payload] of cases) {
    const response = await world.post(null, BASE, payload, { 'content-type': 'application/json', ...headers });
    t.equal(response.statusCode, 401, label);
    t.match(response.headers['www-authenticate'], /^Bearer\b/, `${label}: WWW-Authenticate`);
    t.equal(response.json<ErrorJson>().error.code, 'unauthorized', `${label}: code`);
  }
  const textBody = await world.post(null, BASE, 'hello', { 'content-type': 'text/plain' });
  t.equal(textBody.statusCode, 401, 'the media type is not checked before the caller is known');
  t.equal(await world.tokenCount(), before, 'nothing created');
});

t.test('only an active Registered Employee may create', async (t) => {
  const before = await world.tokenCount();
  for (const [label, userId, status, code] of [
    ['operator', a.operatorId, 403, 'insufficient_scope'],
    ['farmer', a.farmerIds[0]!, 403, 'insufficient_scope'],
    ['inactive employee', a.inactiveEmployeeId, 401, 'unauthorized'],
  ] as const) {
    const jwt = await world.jwtFor(userId);
    const response = await world.post(jwt, BASE, valid);
    t.equal(response.statusCode, status, label);
    t.equal(response.json<ErrorJson>().error.code, code, `${label}: code`);
  }
  t.equal(await world.tokenCount(), before, 'nothing created');
});

t.test('the token always belongs to the caller’s company: the body cannot choose it', async (t) => {
  const before = await world.tokenCount();
  const smuggled = await world.post(b.jwt, BASE, { ...valid, company_id: a.companyId });
  t.equal(smuggled.statusCode, 400);
  t.equal(smuggled.json<ErrorJson>().error.details?.field, 'company_id');
  t.equal(await world.tokenCount(), before, 'nothing created');

  const created = await world.createToken(b.jwt);
  t.equal(created.company_id, b.companyId);
  t.equal(created.created_by, b.employeeId);
});

t.test('a company cannot restrict a token to another company’s units', async (t) => {
  const before = await world.tokenCount();
  const foreign = await world.post(b.jwt, BASE, { ...valid, cooling_unit_ids: [b.unitIds[0], a.unitIds[0]] });
  t.equal(foreign.statusCode, 400);
  t.equal(foreign.json<ErrorJson>().error.details?.field, 'cooling_unit_ids');
  t.equal(await world.tokenCount(), before, 'nothing created, not even a token without the foreign unit');
  const { rows } = await world.db.pool.query('SELECT 1 FROM api_token_cooling_units WHERE cooling_unit_id = ANY($1)', [a.unitIds]);
  t.equal(rows.length, 0, 'no unit link to company A');
});

t.test('the raw token is stored only as its SHA-256', async (t) => {
  const created = await world.createToken(a.jwt, { name: 'hash check' });
  const sha256 = createHash('sha256').update(created.token).digest();
  const { rows } = await world.db.pool.query<{ token_hash: Buffer }>('SELECT token_hash FROM api_tokens WHERE id = $1', [created.id]);
  t.equal(rows[0]?.token_hash.toString('hex'), sha256.toString('hex'), 'token_hash = sha256(raw token)');
});

t.test('pg_dump of the whole database: the raw token is nowhere, its SHA-256 is in a bytea column', async (t) => {
  const created = await world.createToken(a.jwt, { name: 'dump check', cooling_unit_ids: [a.unitIds[1]] });
  const hex = createHash('sha256').update(created.token).digest('hex');
  const dump = await dumpDatabase();
  t.match(dump, /CREATE TABLE public\.api_tokens/, 'the dump covers the schema');
  t.ok(dump.includes(created.id), 'and the token row');
  t.notOk(dump.includes(created.token), 'the raw token is not in the database');
  t.notOk(dump.includes(created.token.slice(4)), 'nor its secret part without the prefix');
  t.notOk(dump.includes(Buffer.from(created.token).toString('hex')), 'nor the raw token as hex bytes');
  t.ok(dump.includes(`\\\\x${hex}`), 'the SHA-256 is stored as bytea (\\x hex in the dump)');
  const { rows } = await world.db.pool.query<{ data_type: string }>(
    "SELECT data_type FROM information_schema.columns WHERE table_name = 'api_tokens' AND column_name = 'token_hash'",
  );
  t.equal(rows[0]?.data_type, 'bytea');
});

t.test('the raw token and the JWT never reach the logs', async (t) => {
  const created = await world.createToken(a.jwt, { name: 'log check' });
  await world.get(a.jwt, `${BASE}/${created.id}`);
  await world.get(a.jwt, BASE);
  // a client that puts the token where it must not go: the query string of a management call
  await world.post(a.jwt, `${BASE}?token=${created.token}`, valid);
  await world.post(a.jwt, `${BASE}/${created.id}/revoke?api_token=${created.token}`);
  const logs = world.logs.join('\n');
  t.ok(world.logs.length > 0, 'the app did log requests');
  t.ok(logs.includes(created.id), 'request lines are there (the token id appears in URLs)');
  t.notOk(logs.includes(created.token), 'the raw token is not logged');
  t.notOk(logs.includes(created.token.slice(4, 30)), 'not even part of it');
  t.notOk(logs.includes(a.jwt), 'the employee JWT is not logged');
  t.notOk(logs.includes(a.jwt.split('.')[2]!), 'not even its signature');
});

t.test('the creation response is the only place the raw token appears', async (t) => {
  const created = await world.createToken(a.jwt, { name: 'shown once' });
  const retrieved = await world.get(a.jwt, `${BASE}/${created.id}`);
  const listed = await world.get(a.jwt, `${BASE}?page_size=1000`);
  const revoked = await world.post(a.jwt, `${BASE}/${created.id}/revoke`);
  for (const [label, response] of [
    ['retrieve', retrieved],
    ['list', listed],
    ['revoke', revoked],
  ] as const) {
    t.equal(response.statusCode, 200, label);
    t.notOk(response.body.includes(created.token), `${label}: no raw token`);
    t.notOk(response.body.includes('"token"'), `${label}: no token field`);
  }
});
