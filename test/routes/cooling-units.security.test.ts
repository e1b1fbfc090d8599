// GET /api/v1/cooling-units, security: a Registered Employee's JWT only, and only their own
// company's units, whatever the query says; an API token is not a way in.
import t from 'tap';
import { createTestApp } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { createWorld, type ErrorJson } from './api-tokens/setup.js';

const world = await createWorld(t);
const { a, b } = world;
const URL = '/api/v1/cooling-units';
const ids = async (jwt: string, query = '') =>
  (await world.get(jwt, `${URL}${query}`)).json<{ data: Array<{ id: number }> }>().data.map((unit) => unit.id);

t.test('each company sees its own live units and never another’s', async (t) => {
  t.strictSame(await ids(a.jwt), a.unitIds);
  t.strictSame(await ids(b.jwt), b.unitIds);
  for (const id of [...b.unitIds, b.deletedUnitId, a.deletedUnitId])
    t.notOk((await ids(a.jwt, '?page_size=1000')).includes(id), `unit ${id} not listed for A`);
  const body = (await world.get(a.jwt, URL)).body;
  t.notOk(body.includes('Beta Cold'), 'no name of the other company');
});

t.test('a company filter in the query is refused, not obeyed', async (t) => {
  for (const query of [`?company_id=${b.companyId}`, `?cooling_unit_id=${b.unitIds[0]}`]) {
    const response = await world.get(a.jwt, `${URL}${query}`);
    t.equal(response.statusCode, 400, query);
    t.equal(response.json<ErrorJson>().error.code, 'invalid_request');
  }
});

t.test('401 and 403 callers see no unit', async (t) => {
  const token = await world.createToken(a.jwt, { scopes: ['users', 'utilization', 'revenue', 'impact', 'sensor_data'] });
  const cases: Array<[string, Record<string, string>, number]> = [
    ['no Authorization', {}, 401],
    ['garbage JWT', { authorization: 'Bearer x.y.z' }, 401],
    ['an API token', { authorization: `Bearer ${token.token}` }, 401],
    ['inactive employee', { authorization: `Bearer ${await world.jwtFor(a.inactiveEmployeeId)}` }, 401],
    ['operator', { authorization: `Bearer ${await world.jwtFor(a.operatorId)}` }, 403],
    ['farmer', { authorization: `Bearer ${await world.jwtFor(a.farmerIds[0]!)}` }, 403],
  ];
  for (const [label, headers, status] of cases) {
    const response = await world.get(null, URL, headers);
    t.equal(response.statusCode, status, label);
    t.equal(response.json<ErrorJson>().error.code, status === 401 ? 'unauthorized' : 'insufficient_scope', label);
    t.notOk(response.body.includes('unit A'), `${label}: no unit`);
  }
});

t.test('the management read limit applies: the 601st read in a minute is 429', async (t) => {
  const limited = await createTestApp(t, {}, { realRateLimits: true });
  const company = await createCompany(limited.db.pool, 'Limited Co');
  const headers = { authorization: `Bearer ${await limited.jwtFor(company.employeeId)}` };
  for (let i = 0; i < 600; i++) {
    const response = await limited.app.inject({ url: URL, headers });
    if (response.statusCode !== 200) t.fail(`read ${i + 1}: ${response.statusCode}`);
  }
  const refused = await limited.app.inject({ url: URL, headers });
  t.equal(refused.statusCode, 429);
  t.match(refused.json<ErrorJson>().error.details, { scope: 'authenticated_read' });
});
