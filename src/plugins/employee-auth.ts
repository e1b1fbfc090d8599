// Management routes: a Registered Employee's JWT. The signature and claims are checked by jose;
// the user is then read from the database, and the company always comes from that row, never
// from a claim.
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { bearerCredential } from '../auth/bearer.js';
import { createJwtVerifier, type JwtVerifier } from '../auth/jwt.js';
import { insufficientScope, unauthorized } from '../http/errors.js';
import { employeeSql, employeeStanding, type UserForAuth } from '../auth/registered-employee.js';
import { MAX_INT4 } from '../db/int4.js';
import type { App } from '../types.js';
import { lookup } from '../db/pool.js';

export interface Employee {
  userId: number;
  companyId: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    jwtVerifier: JwtVerifier;
  }
  interface FastifyRequest {
    /** Set by the employee-auth hook on management routes. */
    employee: Employee;
  }
}

const USER_ID = /^[1-9]\d{0,9}$/;

async function verifiedUserId(app: App, request: FastifyRequest): Promise<number> {
  const token = bearerCredential(request);
  // unknown: jose does not check the claim's type, and `"sub": 5` or `["5"]` would pass the
  // pattern through String() coercion; RFC 7519 makes sub a string
  let subject: unknown;
  try {
    subject = (await app.jwtVerifier.verify(token, app.clock.now())).sub;
  } catch {
    throw unauthorized('Invalid or expired JWT');
  }
  if (typeof subject !== 'string' || !USER_ID.test(subject) || Number(subject) > MAX_INT4) {
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
    const { rows } = await lookup<UserForAuth>(app.db, employeeSql.userForAuth, [userId]);
    const standing = employeeStanding(rows[0]);
    if (standing.kind === 'unknown' || standing.kind === 'inactive') throw unauthorized('Unknown or inactive user');
    if (standing.kind === 'not_an_employee') {
      throw insufficientScope('registered_employee', 'Only a Registered Employee can manage API tokens');
    }
    request.employee = { userId: standing.userId, companyId: standing.companyId };
  };
}

export interface EmployeeAuthOptions {
  /** Tests sign with their own keys; by default the verifier follows the configuration. */
  jwtVerifier?: JwtVerifier | undefined;
}

/** The JWT verifier as a service; routes add employeeAuthHook where they need an employee. */
async function employeeAuth(app: App, options: EmployeeAuthOptions) {
  const { jwt, jwtIssuer, jwtAudience } = app.config;
  if (!jwt) throw new Error('the employee auth needs a JWT configuration');
  app.decorate('jwtVerifier', options.jwtVerifier ?? createJwtVerifier({ jwt, issuer: jwtIssuer, audience: jwtAudience }));
  app.decorateRequest('employee', null as never);
}

export default fp(employeeAuth, { name: 'employee-auth', dependencies: ['clock', 'config', 'database'] });
