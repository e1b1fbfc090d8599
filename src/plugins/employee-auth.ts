// Management routes: a Registered Employee's JWT. The signature and claims are checked by jose;
// the user is then read from the database, and the company always comes from that row, never
// from a claim.
import type { FastifyRequest } from 'fastify';
import { bearerCredential } from '../auth/bearer.js';
import { insufficientScope, unauthorized } from '../http/errors.js';
import { loadQueries } from '../db/sql.js';
import type { App } from '../types.js';

const sql = loadQueries('users', ['userForAuth']);

const USER_ID = /^[1-9]\d{0,9}$/;

export function employeeAuthHook(app: App) {
  return async function authenticateEmployee(request: FastifyRequest) {
    const token = bearerCredential(request.headers.authorization);
    let subject: string;
    try {
      subject = (await app.jwtVerifier.verify(token, app.clock.now())).sub;
    } catch {
      throw unauthorized('Invalid or expired JWT');
    }
    if (!USER_ID.test(subject) || Number(subject) > 2_147_483_647) {
      throw unauthorized('JWT subject is not a user id');
    }
    const { rows } = await app.db.query<{ id: number; company_id: number | null; role: string; is_active: boolean }>(
      sql.userForAuth,
      [Number(subject)],
    );
    const user = rows[0];
    if (!user || !user.is_active) throw unauthorized('Unknown or inactive user');
    if (user.role !== 'REGISTERED_EMPLOYEE' || user.company_id === null) {
      throw insufficientScope('registered_employee', 'Only a Registered Employee can manage API tokens');
    }
    request.employee = { userId: user.id, companyId: user.company_id };
  };
}
