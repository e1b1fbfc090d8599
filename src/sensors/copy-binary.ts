// Readings in PostgreSQL's binary COPY format (COPY ... FROM STDIN WITH (FORMAT binary)), for
// the ingest: the server then takes integers, instants and floats as they are instead of
// parsing their text, which is a good part of what a text COPY costs it.
// The format (PostgreSQL docs, COPY, "Binary Format"): the signature PGCOPY\n\377\r\n\0, an
// int32 flags field and an int32 header-extension length (both 0); per row an int16 field count,
// then each field as an int32 byte length and the type's binary (send/recv) representation; an
// int16 -1 trailer. All integers big-endian. The columns, in COPY_COLUMNS order:
//   cooling_unit_id     integer: int32
//   specification_type  enum: the label's bytes (enum_recv looks the label up, as enum_in does)
//   recorded_at         timestamptz: int64 microseconds since 2000-01-01 00:00 UTC
//   value               double precision: IEEE 754 binary64
import type { Reading, SpecificationType } from './formats.js';

export const COPY_COLUMNS = '(cooling_unit_id, specification_type, recorded_at, value)';

const SIGNATURE = [0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00];
const HEADER_BYTES = SIGNATURE.length + 4 + 4;
const FIELDS = 4;
const LABELS: Record<SpecificationType, number[]> = {
  TEMPERATURE: [...Buffer.from('TEMPERATURE', 'ascii')],
  HUMIDITY: [...Buffer.from('HUMIDITY', 'ascii')],
};
// field count, then per field its length word and bytes: 2 + (4 + 4) + (4 + label) + (4 + 8) + (4 + 8)
const FIXED_ROW_BYTES = 2 + 8 + 4 + 12 + 12;
const LONGEST_LABEL = Math.max(...Object.values(LABELS).map((label) => label.length));
const TWO_TO_32 = 2 ** 32;

/** The rows as one binary COPY stream: header, tuples, trailer. */
export function encodeReadings(rows: readonly Reading[]): Buffer {
  const buffer = Buffer.allocUnsafe(HEADER_BYTES + rows.length * (FIXED_ROW_BYTES + LONGEST_LABEL) + 2);
  // a DataView's setters compile to plain stores; Buffer's write* methods check every argument
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  let at = 0;
  for (const byte of SIGNATURE) buffer[at++] = byte;
  view.setInt32(at, 0); // flags: no OIDs
  view.setInt32(at + 4, 0); // no header extension
  at += 8;
  for (const row of rows) {
    view.setInt16(at, FIELDS);
    view.setInt32(at + 2, 4);
    view.setInt32(at + 6, row.unitId);
    const label = LABELS[row.type];
    view.setInt32(at + 10, label.length);
    at += 14;
    for (let i = 0; i < label.length; i++) buffer[at + i] = label[i]!;
    at += label.length;
    // a non-negative safe integer splits into the two halves of the int64 without rounding;
    // validation only lets through instants from 2000 on (and ~285 years of them fit), so
    // anything else is a caller's bug, refused rather than sent as a wrong instant
    const micros = row.recordedAtUs;
    if (!(micros >= 0 && micros <= Number.MAX_SAFE_INTEGER && Number.isInteger(micros))) {
      throw new RangeError(
        `line ${row.line}: ${row.recordedAt} is outside what the binary COPY encoder takes (2000 onwards, whole microseconds)`,
      );
    }
    const high = Math.floor(micros / TWO_TO_32);
    view.setInt32(at, 8);
    view.setUint32(at + 4, high);
    view.setUint32(at + 8, micros - high * TWO_TO_32);
    view.setInt32(at + 12, 8);
    view.setFloat64(at + 16, row.value);
    at += 24;
  }
  view.setInt16(at, -1);
  return buffer.subarray(0, at + 2);
}
