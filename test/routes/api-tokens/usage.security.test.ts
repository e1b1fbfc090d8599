// GET /api/v1/api-tokens/{token_id}/usage, security: only a Registered Employee of the token's
// company reads its usage; another company's token is 404 exactly like an unknown one, counted or
// not; the API token itself cannot read it; the answer names no other token's traffic.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { BASE, createWorld, type ErrorJson } from './setup.js';

const world = await createWorld(t);
const { a, b } = world;
const aToken = await world.createToken(a.jwt, { scopes: ['users'] });
const bToken = await world.createToken(b.jwt, { scopes: ['users'] });
for (const token of [aToken, bToken]) {
  const answer = await world.app.inject({
    method: 'GET',
    url: '/api/v1/analytics/users',
    headers: { authorization: `Bearer ${token.token}` },
  });
  if (answer.statusCode !== 200) throw new Error(`data request answered ${answer.statusCode}`);
}
await world.app.lastUsed.flush();

t.test('company B reading company A’s token usage: 404, the same body as an unknown id', async (t) => {
  const foreign = await world.get(b.jwt, `${BASE}/${aToken.id}/usage`);
  const unknown = await world.get(b.jwt, `${BASE}/${randomUUID()}/usage`);
  t.equal(foreign.statusCode, 404);
  t.equal(foreign.json<ErrorJson>().error.code, 'not_found');
  t.equal(foreign.body, unknown.body, 'indistinguishable from a token that does not exist');
  t.notOk(foreign.body.includes('127.0.0.1'), 'no client of A’s leaks');
});

t.test('each company sees its own token’s requests only', async (t) => {
  const own = await world.get(a.jwt, `${BASE}/${aToken.id}/usage`);
  t.equal(own.statusCode, 200);
  t.equal(own.json<{ requests: number }>().requests, 1);
  t.equal((await world.get(b.jwt, `${BASE}/${bToken.id}/usage`)).json<{ requests: number }>().requests, 1);
});

t.test('callers without an employee JWT of the company read nothing', async (t) => {
  const cases: Array<[string, Record<string, string>, number]> = [
    ['no Authorization', {}, 401],
    ['the API token itself', { authorization: `Bearer ${aToken.token}` }, 401],
    ['operator', { authorization: `Bearer ${await world.jwtFor(a.operatorId)}` }, 403],
    ['farmer', { authorization: `Bearer ${await world.jwtFor(a.farmerIds[0]!)}` }, 403],
  ];
  for (const [label, headers, status] of cases) {
    const response = await world.get(null, `${BASE}/${aToken.id}/usage`, headers);
    t.equal(response.statusCode, status, label);
    t.notOk(response.body.includes('requests'), `${label}: no figures`);
  }
});
