// The change feed's cursors: opaque to partners, a position in the feed (the id of the last change
// a partner has been given) that only this service can have written, for one company.
// Layout, base64url: version (1 byte) | position (8 bytes, big-endian) | HMAC-SHA256 truncated to
// 16 bytes over version and position. The MAC's key is derived per company from the database's
// cursor key (sensor_changes_state): every process and replica signs and checks alike, across
// restarts, and a cursor of one company is not one for another. Nothing else is kept anywhere.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../http/errors.js';

const VERSION = 1;
const MAC_BYTES = 16;
const CURSOR_BYTES = 1 + 8 + MAC_BYTES;
/** base64url of CURSOR_BYTES, unpadded */
export const CURSOR_PATTERN = '^[A-Za-z0-9_-]{34}$';
const CURSOR_SHAPE = new RegExp(CURSOR_PATTERN);
const MAX_POSITION = 2n ** 63n - 1n;

export const invalidCursor = () =>
  new ApiError(400, 'invalid_cursor', 'since is not a cursor this service gave to this company; pass next_cursor exactly as received', {
    field: 'since',
  });

function macOf(databaseKey: Buffer, companyId: number, body: Buffer): Buffer {
  const companyKey = createHmac('sha256', databaseKey).update(`sensor-changes-cursor:${companyId}`).digest();
  return createHmac('sha256', companyKey).update(body).digest().subarray(0, MAC_BYTES);
}

export function encodeCursor(databaseKey: Buffer, companyId: number, position: bigint): string {
  const body = Buffer.alloc(9);
  body.writeUInt8(VERSION, 0);
  body.writeBigUInt64BE(position, 1);
  return Buffer.concat([body, macOf(databaseKey, companyId, body)]).toString('base64url');
}

/** The cursor's shape only (no key needed yet): its position, or null when it cannot be a cursor. */
export function cursorPosition(cursor: string): bigint | null {
  if (!CURSOR_SHAPE.test(cursor)) return null;
  const bytes = Buffer.from(cursor, 'base64url');
  // a base64url text whose last character has stray low bits decodes to the same bytes: refuse it,
  // so each cursor has exactly one spelling
  if (bytes.length !== CURSOR_BYTES || bytes.toString('base64url') !== cursor || bytes.readUInt8(0) !== VERSION) return null;
  const position = bytes.readBigUInt64BE(1);
  return position > MAX_POSITION ? null : position;
}

/** Whether the cursor was signed for this company with this database's key. */
export function cursorIsGenuine(databaseKey: Buffer, companyId: number, cursor: string): boolean {
  const bytes = Buffer.from(cursor, 'base64url');
  const expected = macOf(databaseKey, companyId, bytes.subarray(0, 9));
  return timingSafeEqual(bytes.subarray(9), expected);
}
