// GET /api/v1/api-tokens/{token_id}, security: another company's token is indistinguishable from
// a token that does not exist; SQL in the id is just a miss; the raw token never comes back.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { BASE, createWorld, type ErrorJson } from './setup.js';

const world = await createWorld(t);
const { a, b } = world;
const aToken = await world.createToken(a.jwt, { name: 'A secret partner', cooling_unit_ids: [a.unitIds[0]] });
const bToken = await world.createToken(b.jwt, { name: 'B token' });

t.test('company B gets 404 for company A’s token, exactly like for an unknown id', async (t) => {
  const foreign = await world.get(b.jwt, `${BASE}/${aToken.id}`);
  const unknown = await world.get(b.jwt, `${BASE}/${randomUUID()}`);
  t.equal(foreign.statusCode, 404);
  t.equal(foreign.json<ErrorJson>().error.code, 'not_found');
  t.equal(foreign.body, unknown.body, 'same body: the token’s existence is not revealed');
  t.notOk(foreign.body.includes('A secret partner'));
  t.equal((await world.get(a.jwt, `${BASE}/${bToken.id}`)).statusCode, 404, 'and the other way round');
  t.equal((await world.get(a.jwt, `${BASE}/${aToken.id}`)).statusCode, 200, 'the owner still reads it');
});

t.test('401 and 403 come before any lookup', async (t) => {
  const anonymous = await world.get(null, `${BASE}/${aToken.id}`);
  t.equal(anonymous.statusCode, 401);
  t.match(anonymous.headers['www-authenticate'], /^Bearer\b/);
  t.equal(anonymous.json<ErrorJson>().error.code, 'unauthorized');
  t.notOk(anonymous.body.includes(aToken.name));
  const unknownAnonymous = await world.get(null, `${BASE}/${randomUUID()}`);
  t.equal(unknownAnonymous.body, anonymous.body, 'an anonymous caller cannot tell ids apart');
  const operator = await world.get(await world.jwtFor(a.operatorId), `${BASE}/${aToken.id}`);
  t.equal(operator.statusCode, 403);
  t.equal(operator.json<ErrorJson>().error.code, 'insufficient_scope');
  t.notOk(operator.body.includes(aToken.name));
});

t.test('SQL-looking ids are plain misses and change nothing', async (t) => {
  const before = await world.db.pool.query('SELECT id, revoked, name FROM api_tokens ORDER BY id');
  for (const id of [
    "' OR '1'='1",
    `${aToken.id}' OR '1'='1`,
    `${aToken.id}'; UPDATE api_tokens SET revoked = true; --`,
    '1; DROP TABLE api_tokens; --',
    "00000000-0000-0000-0000-000000000000' UNION SELECT * FROM api_tokens --",
    `${bToken.id}' OR company_id = ${b.companyId} --`,
  ]) {
    const response = await world.get(a.jwt, `${BASE}/${encodeURIComponent(id)}`);
    t.equal(response.statusCode, 404, id);
    t.notOk(response.body.includes('B token') || response.body.includes(aToken.name), `${id}: no data`);
  }
  const after = await world.db.pool.query('SELECT id, revoked, name FROM api_tokens ORDER BY id');
  t.strictSame(after.rows, before.rows, 'api_tokens unchanged');
});

t.test('the raw token is never in a retrieve response, and never logged', async (t) => {
  const response = await world.get(a.jwt, `${BASE}/${aToken.id}`);
  t.notOk(response.body.includes(aToken.token));
  t.notOk(response.body.includes('"token"'));
  // the raw token used as the id, and sent in the query string, must not reach the logs
  t.equal((await world.get(a.jwt, `${BASE}/${aToken.token}`)).statusCode, 404);
  await world.get(a.jwt, `${BASE}/${aToken.id}?token=${aToken.token}`);
  await world.get(a.jwt, `${BASE}/${aToken.id}?access_token=${aToken.token}&x=1`);
  const logs = world.logs.join('\n');
  t.ok(logs.includes(aToken.id), 'the requests were logged');
  t.notOk(logs.includes(aToken.token), 'the raw token is not in the logs');
  t.notOk(logs.includes(aToken.token.slice(4, 24)), 'nor any part of it');
});
