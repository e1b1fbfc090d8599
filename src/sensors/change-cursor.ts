// The change feed's cursors: opaque to partners, a position in the feed (the id of the last change
// a partner has been given) that only this service can have written, for one company. The
// position counts every company's loads, so it must not be readable.
// - Version 2, in every answer: version (1 byte) | position (8 bytes, big-endian), sealed per
//   company (cursor-seal.ts, as sensor history's cursor): nothing in it can be read or edited.
// - Version 1, in answers before: the same 9 bytes in the clear, then an HMAC-SHA256 of them
//   truncated to 16 bytes, keyed per company. Still accepted and read as before, for the cursors
//   partners and coldtrack-export's checkpoints (client/src/export) hold; never given out again.
// Both are 25 bytes (34 base64url characters), so the documented shape did not change. Keys are
// derived from the database's cursor key (sensor_changes_state): every process and replica seals
// and checks alike, across restarts, and a cursor of one company is not one for another.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../http/errors.js';
import { openCursor, sealCursor, sealedLength } from './cursor-seal.js';

const VERSION = 2;
const PURPOSE = 'sensor-changes-cursor-v2';
const PLAIN_BYTES = 1 + 8;
const SIGNED_VERSION = 1;
const SIGNED_MAC_BYTES = 16;
const SIGNED_BYTES = PLAIN_BYTES + SIGNED_MAC_BYTES;
/** base64url of either version's 25 bytes, unpadded */
export const CURSOR_PATTERN = `^[A-Za-z0-9_-]{${sealedLength(PLAIN_BYTES)}}$`;
const CURSOR_SHAPE = new RegExp(CURSOR_PATTERN);
const MAX_POSITION = 2n ** 63n - 1n;

export const invalidCursor = () =>
  new ApiError(400, 'invalid_cursor', 'since is not a cursor this service gave to this company; pass next_cursor exactly as received', {
    field: 'since',
  });

export function encodeCursor(databaseKey: Buffer, companyId: number, position: bigint): string {
  const plain = Buffer.alloc(PLAIN_BYTES);
  plain.writeUInt8(VERSION, 0);
  plain.writeBigUInt64BE(position, 1);
  return sealCursor(databaseKey, PURPOSE, companyId, plain);
}

/** The position of a cursor this service gave to this company (either version), or null for anything else. */
export function cursorPosition(databaseKey: Buffer, companyId: number, cursor: string): bigint | null {
  if (!CURSOR_SHAPE.test(cursor)) return null;
  const sealed = openCursor(databaseKey, PURPOSE, companyId, cursor, PLAIN_BYTES);
  const plain = sealed?.readUInt8(0) === VERSION ? sealed : signedPlain(databaseKey, companyId, cursor);
  if (!plain) return null;
  const position = plain.readBigUInt64BE(1);
  return position > MAX_POSITION ? null : position;
}

function signedMacOf(databaseKey: Buffer, companyId: number, body: Buffer): Buffer {
  const companyKey = createHmac('sha256', databaseKey).update(`sensor-changes-cursor:${companyId}`).digest();
  return createHmac('sha256', companyKey).update(body).digest().subarray(0, SIGNED_MAC_BYTES);
}

/** A version 1 cursor's version and position, when it is one signed for this company. */
function signedPlain(databaseKey: Buffer, companyId: number, cursor: string): Buffer | null {
  const bytes = Buffer.from(cursor, 'base64url');
  // a base64url text whose last character has stray low bits decodes to the same bytes: refuse it,
  // so each cursor has exactly one spelling
  if (bytes.length !== SIGNED_BYTES || bytes.toString('base64url') !== cursor || bytes.readUInt8(0) !== SIGNED_VERSION) return null;
  const plain = bytes.subarray(0, PLAIN_BYTES);
  return timingSafeEqual(bytes.subarray(PLAIN_BYTES), signedMacOf(databaseKey, companyId, plain)) ? plain : null;
}
