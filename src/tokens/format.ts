// API token format: `ctk_` + 256 CSPRNG bits in base62 (43 chars) + CRC32 checksum in base62
// (6 chars). The prefix lets secret scanners find leaked tokens; the checksum rejects a mistyped
// or made-up token before any cache or database lookup. Only SHA-256 of the whole token is kept.
import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const TOKEN_PREFIX = 'ctk_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 43; // 62^43 > 2^256
const CHECKSUM_LENGTH = 6; // 62^6 > 2^32
const TOKEN_PATTERN = new RegExp(`^${TOKEN_PREFIX}[0-9A-Za-z]{${SECRET_LENGTH + CHECKSUM_LENGTH}}$`);
/** Token-shaped substrings, for log redaction. */
export const TOKEN_LIKE = new RegExp(`${TOKEN_PREFIX}[0-9A-Za-z]{8,}`, 'g');

function base62(value: bigint, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = ALPHABET[Number(value % 62n)] + out;
    value /= 62n;
  }
  return out;
}

function checksumOf(body: string): string {
  return base62(BigInt(crc32(body)), CHECKSUM_LENGTH);
}

export function generateToken(): string {
  const secret = base62(BigInt(`0x${randomBytes(32).toString('hex')}`), SECRET_LENGTH);
  const body = TOKEN_PREFIX + secret;
  return body + checksumOf(body);
}

/** Shape and checksum only: true says nothing about whether the token exists. */
export function isWellFormedToken(candidate: string): boolean {
  if (!TOKEN_PATTERN.test(candidate)) return false;
  const body = candidate.slice(0, -CHECKSUM_LENGTH);
  return checksumOf(body) === candidate.slice(-CHECKSUM_LENGTH);
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
