// A small hand-built world: two companies, each with units (one soft-deleted), an employee, an
// inactive employee and an operator. Tests state exactly what they rely on.
import type pg from 'pg';

export interface CompanyFixture {
  companyId: number;
  locationId: number;
  unitIds: number[];
  deletedUnitId: number;
  employeeId: number;
  inactiveEmployeeId: number;
  operatorId: number;
  farmerIds: number[];
}

/** A company createCompany made (in this database or in the template it was cloned from), by name. */
export async function findCompany(pool: pg.Pool, name: string): Promise<CompanyFixture> {
  const { rows } = await pool.query<{ fixture: CompanyFixture | null }>(
    `SELECT json_build_object(
       'companyId', c.id,
       'locationId', (SELECT min(id) FROM locations WHERE company_id = c.id),
       'unitIds', (SELECT json_agg(id ORDER BY id) FROM cooling_units WHERE company_id = c.id AND NOT deleted),
       'deletedUnitId', (SELECT min(id) FROM cooling_units WHERE company_id = c.id AND deleted),
       'employeeId', (SELECT min(id) FROM users WHERE company_id = c.id AND role = 'REGISTERED_EMPLOYEE' AND is_active),
       'inactiveEmployeeId', (SELECT min(id) FROM users WHERE company_id = c.id AND role = 'REGISTERED_EMPLOYEE' AND NOT is_active),
       'operatorId', (SELECT min(id) FROM users WHERE company_id = c.id AND role = 'OPERATOR'),
       'farmerIds', (SELECT json_agg(id ORDER BY id) FROM users WHERE company_id = c.id AND role = 'FARMER')
     ) AS fixture
     FROM companies c WHERE c.name = $1`,
    [name],
  );
  if (!rows[0]?.fixture) throw new Error(`no company named ${name}`);
  return rows[0].fixture;
}

export async function createCompany(pool: pg.Pool, name: string, country = 'NG', currency = 'NGN'): Promise<CompanyFixture> {
  const one = async <T>(sql: string, params: unknown[]) => (await pool.query(sql, params)).rows[0] as T;
  const { id: companyId } = await one<{ id: number }>('INSERT INTO companies (name, country, currency) VALUES ($1, $2, $3) RETURNING id', [
    name,
    country,
    currency,
  ]);
  const { id: locationId } = await one<{ id: number }>(
    "INSERT INTO locations (company_id, name, state, city) VALUES ($1, 'Main market', 'Lagos', 'Ikeja') RETURNING id",
    [companyId],
  );
  const unit = (label: string, deleted: boolean) =>
    one<{ id: number }>(
      `INSERT INTO cooling_units (location_id, company_id, name, capacity_crates, capacity_kg, deleted, deleted_at)
       VALUES ($1, $2, $3, 100, 2500, $4, CASE WHEN $4 THEN now() END) RETURNING id`,
      [locationId, companyId, label, deleted],
    );
  const unitIds = [
    (await unit(`${name} unit A`, false)).id,
    (await unit(`${name} unit B`, false)).id,
    (await unit(`${name} unit C`, false)).id,
  ];
  const deletedUnitId = (await unit(`${name} unit gone`, true)).id;
  const user = (role: string, active: boolean, code: string | null) =>
    one<{ id: number }>('INSERT INTO users (role, company_id, first_name, is_active, user_code) VALUES ($1, $2, $3, $4, $5) RETURNING id', [
      role,
      companyId,
      `${name} ${role.toLowerCase()}`,
      active,
      code,
    ]);
  const employeeId = (await user('REGISTERED_EMPLOYEE', true, null)).id;
  const inactiveEmployeeId = (await user('REGISTERED_EMPLOYEE', false, null)).id;
  const operatorId = (await user('OPERATOR', true, null)).id;
  const farmerIds = [(await user('FARMER', true, `${name}-F1`)).id, (await user('FARMER', true, `${name}-F2`)).id];
  return { companyId, locationId, unitIds, deletedUnitId, employeeId, inactiveEmployeeId, operatorId, farmerIds };
}
