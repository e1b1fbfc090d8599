// Extracts the credential from `Authorization: Bearer <credential>` (RFC 6750). One header only:
// Node keeps the first of several and drops the rest, so two would silently mean the first.
import type { FastifyRequest } from 'fastify';
import { invalidRequest, unauthorized } from '../http/errors.js';

export function bearerCredential(request: Pick<FastifyRequest, 'headers' | 'raw'>): string {
  const raw = request.raw.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'authorization') count++;
  if (count > 1) throw invalidRequest('authorization', 'Send one Authorization header, not several');
  const header = request.headers.authorization;
  if (!header) throw unauthorized('Missing Authorization header: send "Authorization: Bearer <credential>"', false);
  const match = /^Bearer +([\x21-\x7e]+) *$/i.exec(header);
  if (!match) throw unauthorized('Authorization header must be "Bearer <credential>"');
  return match[1]!;
}
