// GET /api/v1/me: the signed-in Registered Employee and their company, by name, for the console's
// header; the company is the one the employee's user record names.
import t from 'tap';
import { createWorld } from './api-tokens/setup.js';

const world = await createWorld(t);
const { a, b } = world;

t.test('the employee and the company, named', async (t) => {
  const response = await world.get(a.jwt, '/api/v1/me');
  t.equal(response.statusCode, 200);
  t.strictSame(response.json(), {
    user_id: a.employeeId,
    name: 'Alpha Cold registered_employee',
    company_id: a.companyId,
    company_name: 'Alpha Cold',
  });
  t.strictSame((await world.get(b.jwt, '/api/v1/me')).json(), {
    user_id: b.employeeId,
    name: 'Beta Cold registered_employee',
    company_id: b.companyId,
    company_name: 'Beta Cold',
  });
});

t.test('first and last name together; a blank name is null', async (t) => {
  const {
    rows: [ada],
  } = await world.db.pool.query<{ id: number }>(
    "INSERT INTO users (role, company_id, first_name, last_name) VALUES ('REGISTERED_EMPLOYEE', $1, 'Ada', 'Obi') RETURNING id",
    [a.companyId],
  );
  t.match((await world.get(await world.jwtFor(ada!.id), '/api/v1/me')).json(), { user_id: ada!.id, name: 'Ada Obi' });
  const {
    rows: [blank],
  } = await world.db.pool.query<{ id: number }>(
    "INSERT INTO users (role, company_id, first_name, last_name) VALUES ('REGISTERED_EMPLOYEE', $1, ' ', '') RETURNING id",
    [a.companyId],
  );
  t.match((await world.get(await world.jwtFor(blank!.id), '/api/v1/me')).json(), { user_id: blank!.id, name: null });
});
