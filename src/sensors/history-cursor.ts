// The cursor of GET /api/v1/sensor-data: where a walk through a history stands, carried by the
// client from page to page (next_cursor, then ?cursor=), so any process or instance continues it
// exactly. It holds the key of the last record returned (the next page starts strictly after it),
// the window and a digest of the filters the walk was started with, how many records came before
// (to place the next page cheaply and to number it), and the change feed's position when the walk
// began (a replica behind it must not answer). Sealed per company (cursor-seal.ts): opaque, and
// refused when edited or another company's.
import { createHash } from 'node:crypto';
import { ApiError } from '../http/errors.js';
import { openCursor, sealCursor, sealedLength } from './cursor-seal.js';
import { SPECIFICATION_TYPES, type SpecificationType } from './formats.js';
import type { Aggregation } from './day-counts.js';

const VERSION = 1;
const PURPOSE = 'sensor-data-walk';
const AGGREGATION_CODES: readonly Aggregation[] = ['raw', 'hourly', 'daily'];
const FILTERS_DIGEST_BYTES = 8;
// version, aggregation, key (µs, unit, type), records before, page, head, window days, filters
const PLAIN_BYTES = 1 + 1 + 8 + 4 + 1 + 4 + 4 + 8 + 4 + 4 + FILTERS_DIGEST_BYTES;
export const HISTORY_CURSOR_PATTERN = `^[A-Za-z0-9_-]{${sealedLength(PLAIN_BYTES)}}$`;
const SHAPE = new RegExp(HISTORY_CURSOR_PATTERN);
const MAX_UINT32 = 2 ** 32 - 1;

/** A record's place in the history's order: (timestamp, cooling_unit_id, specification_type). */
export interface RecordKey {
  /** as the records write it: YYYY-MM-DDTHH:MM:SS[.ffffff]Z */
  timestamp: string;
  unitId: number;
  type: SpecificationType;
}

export interface WalkPosition {
  aggregation: Aggregation;
  /** the last record returned so far: the next page starts strictly after it */
  after: RecordKey;
  /** records returned before the next page */
  recordsBefore: number;
  /** the number of the page the cursor leads to */
  page: number;
  /** the change feed's position the walk's first page saw: every later page must see at least it */
  minHead: bigint;
  /** the window's first and last day (ms at 00:00 UTC) */
  window: { start: number; end: number };
  /** filtersDigest of the walk's filters */
  filters: Buffer;
}

/** The filters a walk keeps from page to page, other than the window (a cursor of other filters is refused). */
export interface WalkFilters {
  aggregation: Aggregation;
  types: readonly SpecificationType[];
  coolingUnitId: number | null;
  locationId: number | null;
}

export function filtersDigest(filters: WalkFilters): Buffer {
  const canonical = JSON.stringify([filters.aggregation, [...filters.types].sort(), filters.coolingUnitId, filters.locationId]);
  return createHash('sha256').update(canonical).digest().subarray(0, FILTERS_DIGEST_BYTES);
}

export const invalidHistoryCursor = (why = 'cursor is not a cursor this service gave to this company') =>
  new ApiError(400, 'invalid_cursor', `${why}; pass next_cursor exactly as received, with the filters of the walk it came from`, {
    field: 'cursor',
  });

/** Whether the text has a cursor's shape (before the company, and so the key, is known). */
export const looksLikeHistoryCursor = (text: string) => SHAPE.test(text);

const DAY_MS = 86_400_000;
const MICROS = 1_000_000n;

/** µs since the epoch of a record's timestamp text, exactly (Date keeps only ms). */
function microsOf(timestamp: string): bigint {
  const seconds = BigInt(Date.parse(`${timestamp.slice(0, 19)}Z`) / 1000);
  const fraction = timestamp.length > 20 ? BigInt(timestamp.slice(20, -1).padEnd(6, '0')) : 0n;
  return seconds * MICROS + fraction;
}

function timestampOf(micros: bigint): string {
  // floor division, also before 1970
  let seconds = micros / MICROS;
  let fraction = micros % MICROS;
  if (fraction < 0n) {
    seconds -= 1n;
    fraction += MICROS;
  }
  const whole = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  return fraction === 0n ? `${whole}Z` : `${whole}.${String(fraction).padStart(6, '0')}Z`;
}

export function encodeHistoryCursor(databaseKey: Buffer, companyId: number, position: WalkPosition): string {
  const plain = Buffer.alloc(PLAIN_BYTES);
  let at = plain.writeUInt8(VERSION, 0);
  at = plain.writeUInt8(AGGREGATION_CODES.indexOf(position.aggregation), at);
  at = plain.writeBigInt64BE(microsOf(position.after.timestamp), at);
  at = plain.writeInt32BE(position.after.unitId, at);
  at = plain.writeUInt8(SPECIFICATION_TYPES.indexOf(position.after.type), at);
  at = plain.writeUInt32BE(Math.min(position.recordsBefore, MAX_UINT32), at);
  at = plain.writeUInt32BE(Math.min(position.page, MAX_UINT32), at);
  at = plain.writeBigInt64BE(position.minHead, at);
  at = plain.writeInt32BE(position.window.start / DAY_MS, at);
  at = plain.writeInt32BE(position.window.end / DAY_MS, at);
  position.filters.copy(plain, at);
  return sealCursor(databaseKey, PURPOSE, companyId, plain);
}

/** The walk a cursor continues, or null when it is not one this service sealed for this company. */
export function decodeHistoryCursor(databaseKey: Buffer, companyId: number, cursor: string): WalkPosition | null {
  if (!looksLikeHistoryCursor(cursor)) return null;
  const plain = openCursor(databaseKey, PURPOSE, companyId, cursor, PLAIN_BYTES);
  if (!plain || plain.readUInt8(0) !== VERSION) return null;
  const aggregation = AGGREGATION_CODES[plain.readUInt8(1)];
  const type = SPECIFICATION_TYPES[plain.readUInt8(14)];
  if (!aggregation || !type) return null;
  return {
    aggregation,
    after: { timestamp: timestampOf(plain.readBigInt64BE(2)), unitId: plain.readInt32BE(10), type },
    recordsBefore: plain.readUInt32BE(15),
    page: plain.readUInt32BE(19),
    minHead: plain.readBigInt64BE(23),
    window: { start: plain.readInt32BE(31) * DAY_MS, end: plain.readInt32BE(35) * DAY_MS },
    filters: plain.subarray(39, 39 + FILTERS_DIGEST_BYTES),
  };
}
