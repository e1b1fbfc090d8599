// Who counts as a Registered Employee, the only user the management routes serve: an active user of
// role REGISTERED_EMPLOYEE with a company. One definition for the employee-auth plugin and for
// `npm run mint-jwt`, which refuses to sign for anyone else.
import { loadQueries } from '../db/sql.js';

export const employeeSql = loadQueries('employees', ['userForAuth']);

/** A row of employeeSql.userForAuth. */
export interface UserForAuth {
  id: number;
  company_id: number | null;
  role: string;
  is_active: boolean;
}

export type EmployeeStanding =
  | { kind: 'registered_employee'; userId: number; companyId: number }
  | { kind: 'unknown' }
  | { kind: 'inactive' }
  | { kind: 'not_an_employee'; role: string };

export function employeeStanding(user: UserForAuth | undefined): EmployeeStanding {
  if (!user) return { kind: 'unknown' };
  if (!user.is_active) return { kind: 'inactive' };
  if (user.role !== 'REGISTERED_EMPLOYEE' || user.company_id === null) return { kind: 'not_an_employee', role: user.role };
  return { kind: 'registered_employee', userId: user.id, companyId: user.company_id };
}
