// GET /api/v1/me, security: only a Registered Employee (401 without a usable JWT or for an
// inactive user, 403 for an operator or farmer), a query string is 400 like every route's unknown
// parameter, and a user moved to another company is shown in the company their record now names.
import t from 'tap';
import { createWorld, type ErrorJson } from './api-tokens/setup.js';

const world = await createWorld(t);
const { a, b } = world;
const ME = '/api/v1/me';

t.test('401 and 403, with nothing of the employee', async (t) => {
  const token = await world.createToken(a.jwt);
  for (const [label, headers] of [
    ['none', {}],
    ['garbage', { authorization: 'Bearer x.y.z' }],
    ['an API token', { authorization: `Bearer ${token.token}` }],
    ['inactive', { authorization: `Bearer ${await world.jwtFor(a.inactiveEmployeeId)}` }],
  ] as const) {
    const response = await world.get(null, ME, headers);
    t.equal(response.statusCode, 401, label);
    t.notOk(response.body.includes('Alpha Cold'), `${label}: no name`);
  }
  for (const userId of [a.operatorId, a.farmerIds[0]!]) {
    const response = await world.get(await world.jwtFor(userId), ME);
    t.equal(response.statusCode, 403);
    t.equal(response.json<ErrorJson>().error.code, 'insufficient_scope');
  }
});

t.test('a query parameter is 400 naming it', async (t) => {
  for (const name of ['user_id', 'company_id']) {
    const response = await world.get(a.jwt, `${ME}?${name}=${b.employeeId}`);
    t.equal(response.statusCode, 400);
    t.equal(response.json<ErrorJson>().error.details?.field, name);
  }
});

t.test("the company is the user record's, read on every request", async (t) => {
  const {
    rows: [mover],
  } = await world.db.pool.query<{ id: number }>(
    "INSERT INTO users (role, company_id, first_name) VALUES ('REGISTERED_EMPLOYEE', $1, 'Mover') RETURNING id",
    [a.companyId],
  );
  const jwt = await world.jwtFor(mover!.id);
  t.match((await world.get(jwt, ME)).json(), { company_id: a.companyId, company_name: 'Alpha Cold' });
  await world.db.pool.query('UPDATE users SET company_id = $1 WHERE id = $2', [b.companyId, mover!.id]);
  t.match((await world.get(jwt, ME)).json(), { company_id: b.companyId, company_name: 'Beta Cold' }, 'the same JWT, the new company');
});
