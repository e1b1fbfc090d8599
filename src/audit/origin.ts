// Who acted and from where, as a request tells it: the employee the JWT named (read from the
// database by the auth hook) or the reporter of a leak, the client IP as TRUST_PROXY resolves it,
// the User-Agent and the request id the answer carries in X-Request-Id.
import type { FastifyRequest } from 'fastify';
import { parseForwardedAddress } from '../http/forwarded-for.js';
import type { ActionOrigin } from './events.js';

/** The longest User-Agent kept, in characters (the table's limit). */
export const MAX_USER_AGENT_LENGTH = 512;

function userAgentOf(request: FastifyRequest): string | null {
  const header = request.headers['user-agent'];
  if (typeof header !== 'string' || header === '') return null;
  // by code points: a cut never splits a character in two
  const characters = [...header];
  return characters.length > MAX_USER_AGENT_LENGTH ? characters.slice(0, MAX_USER_AGENT_LENGTH).join('') : header;
}

export function employeeOrigin(request: FastifyRequest): ActionOrigin {
  return {
    actor: { type: 'employee', id: String(request.employee.userId) },
    // the socket's address may be IPv4-mapped IPv6 (::ffff:203.0.113.7): written as IPv4, the way
    // an address from X-Forwarded-For is (src/http/forwarded-for.ts)
    clientIp: parseForwardedAddress(request.ip),
    userAgent: userAgentOf(request),
    requestId: request.id,
  };
}

/** A leak report's origin: the reporter by its name (`github`), from where the report came. */
export function reporterOrigin(request: FastifyRequest, reporter: string): ActionOrigin {
  return {
    actor: { type: 'leak_reporter', id: reporter },
    clientIp: parseForwardedAddress(request.ip),
    userAgent: userAgentOf(request),
    requestId: request.id,
  };
}
