// Extracts the credential from `Authorization: Bearer <credential>` (RFC 6750).
import { unauthorized } from '../http/errors.js';

export function bearerCredential(header: string | undefined): string {
  if (!header) throw unauthorized('Missing Authorization header: send "Authorization: Bearer <credential>"', false);
  const match = /^Bearer +([\x21-\x7e]+) *$/i.exec(header);
  if (!match) throw unauthorized('Authorization header must be "Bearer <credential>"');
  return match[1]!;
}
