// Management routes: a Registered Employee's JWT. The signature and claims are checked by jose;
// the user is then read from the database, and the company always comes from that row, never
// from a claim.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bearerCredential } from '../auth/bearer.js';
import { insufficientScope, unauthorized } from '../http/errors.js';
import { loadQueries } from '../db/sql.js';
import type { App } from '../types.js';

const sql = loadQueries('users', ['userForAuth']);

const USER_ID = /^[1-9]\d{0,9}$/;

async function verifiedUserId(app: App, request: FastifyRequest): Promise<number> {
  const token = bearerCredential(request.headers.authorization);
  // unknown: jose does not check the claim's type, and `"sub": 5` or `["5"]` would pass the
  // pattern through String() coercion; RFC 7519 makes sub a string
  let subject: unknown;
  try {
    subject = (await app.jwtVerifier.verify(token, app.clock.now())).sub;
  } catch {
    throw unauthorized('Invalid or expired JWT');
  }
  if (typeof subject !== 'string' || !USER_ID.test(subject) || Number(subject) > 2_147_483_647) {
    throw unauthorized('JWT subject is not a user id');
  }
  return Number(subject);
}

export function employeeAuthHook(app: App) {
  return async function authenticateEmployee(request: FastifyRequest, reply: FastifyReply) {
    let userId: number;
    try {
      userId = await verifiedUserId(app, request);
    } catch (error) {
      // without valid credentials the request is public: limited by client IP
      await app.rateLimits.checkPublic(request, reply);
      throw error;
    }
    await app.rateLimits.checkUser(userId, request, reply);
    const { rows } = await app.db.query<{ id: number; company_id: number | null; role: string; is_active: boolean }>(
      sql.userForAuth,
      [userId],
    );
    const user = rows[0];
    if (!user || !user.is_active) throw unauthorized('Unknown or inactive user');
    if (user.role !== 'REGISTERED_EMPLOYEE' || user.company_id === null) {
      throw insufficientScope('registered_employee', 'Only a Registered Employee can manage API tokens');
    }
    request.employee = { userId: user.id, companyId: user.company_id };
  };
}
