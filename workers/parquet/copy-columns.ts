// A bulk slice's binary COPY bytes (COPY ... TO STDOUT WITH (FORMAT binary), the binaryColumns
// query of sql/queries/sensor-bulk.sql) decoded into columns, a row group at a time, for the
// Parquet thread (workers/parquet-thread.ts). Chunks may split a tuple anywhere.
// The format (PostgreSQL docs, COPY, "Binary Format"; src/sensors/copy-binary.ts writes it): the
// signature PGCOPY\n\377\r\n\0, an int32 flags field, an int32 header-extension length and that
// many bytes; per tuple an int16 field count, then each field as an int32 byte length (-1: NULL)
// and the type's send representation; an int16 -1 trailer. All integers big-endian. The columns:
//   at                  timestamptz: int64 microseconds since 2000-01-01 00:00 UTC
//   cooling_unit_id     int4
//   specification_type  text: the label's bytes
//   value               float8
//   sample_count        int4
//   min, max            float8, or NULL (raw readings)

export const SPECIFICATION_LABELS = ['TEMPERATURE', 'HUMIDITY'] as const;

const SIGNATURE = [0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00];
const FIELDS = 7;
const TWO_TO_32 = 2 ** 32;
// 2000-01-01 (PostgreSQL's epoch) in microseconds since 1970-01-01, as the two halves of an int64
const POSTGRES_EPOCH_US = 946_684_800_000_000;
const EPOCH_HIGH = Math.floor(POSTGRES_EPOCH_US / TWO_TO_32);
const EPOCH_LOW = POSTGRES_EPOCH_US - EPOCH_HIGH * TWO_TO_32;
const LABEL_BYTES = SPECIFICATION_LABELS.map((label) => [...Buffer.from(label, 'ascii')]);

/** A row group's columns; the first `rows` entries of each are the records. */
export interface SensorColumns {
  rows: number;
  /** microseconds since 1970-01-01 UTC, little-endian int64s (Arrow's layout) */
  timestamps: BigInt64Array;
  coolingUnitIds: Int32Array;
  /** index into SPECIFICATION_LABELS */
  specificationTypes: Int8Array;
  values: Float64Array;
  sampleCounts: Int32Array;
  mins: Float64Array;
  maxes: Float64Array;
  /** Arrow's validity bitmap of min and max (NULL together: both or neither), bit set when present */
  present: Uint8Array;
  nulls: number;
}

export class CopyFormatError extends Error {}

/**
 * Decodes the stream's tuples into one reused set of columns of `capacity` rows: push() bytes,
 * then decode() until it says the group is full (take it, then reset()) or it needs more bytes.
 * A thread keeps one for all its streams, starting each with restart().
 */
export class CopyColumns {
  readonly columns: SensorColumns;
  private readonly timestampWords: DataView;
  private buffer = new Uint8Array(0);
  /** the bytes pushed and not yet consumed past `at`: a view of `buffer` */
  private pending = this.buffer;
  private view = new DataView(this.buffer.buffer);
  private at = 0;
  private headerRead = false;
  /** the trailer was read: no tuple follows */
  ended = false;

  constructor(readonly capacity: number) {
    const timestamps = new BigInt64Array(capacity);
    this.timestampWords = new DataView(timestamps.buffer);
    this.columns = {
      rows: 0,
      timestamps,
      coolingUnitIds: new Int32Array(capacity),
      specificationTypes: new Int8Array(capacity),
      values: new Float64Array(capacity),
      sampleCounts: new Int32Array(capacity),
      mins: new Float64Array(capacity),
      maxes: new Float64Array(capacity),
      present: new Uint8Array(Math.ceil(capacity / 8)),
      nulls: 0,
    };
  }

  /**
   * Bytes of the stream, in order. They are copied behind what is still unread, into one buffer
   * the decoder keeps (it grows to the largest chunk and a row group's leftover, never per chunk):
   * the caller may reuse its chunk as soon as this returns.
   */
  push(chunk: Uint8Array): void {
    const left = this.pending.length - this.at;
    const needed = left + chunk.length;
    if (needed > this.buffer.length) {
      const grown = new Uint8Array(Math.max(needed, this.buffer.length * 2));
      grown.set(this.pending.subarray(this.at));
      this.buffer = grown;
    } else if (this.at > 0) {
      this.buffer.copyWithin(0, this.at, this.pending.length);
    }
    this.buffer.set(chunk, left);
    this.pending = this.buffer.subarray(0, needed);
    this.view = new DataView(this.buffer.buffer, 0, needed);
    this.at = 0;
  }

  get full(): boolean {
    return this.columns.rows === this.capacity;
  }

  /** Forgets the stream so far (a new stream starts with its header), keeping the buffers. */
  restart(): void {
    this.pending = this.buffer.subarray(0, 0);
    this.at = 0;
    this.headerRead = false;
    this.ended = false;
    this.reset();
  }

  /** Empties the columns for the next row group. */
  reset(): void {
    this.columns.rows = 0;
    this.columns.nulls = 0;
    this.columns.present.fill(0);
  }

  /** Decodes the tuples the bytes pushed so far hold, until the group is full or the stream ended. */
  decode(): void {
    if (!this.headerRead && !this.readHeader()) return;
    while (!this.ended && !this.full && this.readTuple());
  }

  /** true when the whole stream was read: the trailer and nothing after it */
  get complete(): boolean {
    return this.ended && this.at === this.pending.length;
  }

  private readHeader(): boolean {
    const { pending, view } = this;
    if (pending.length < SIGNATURE.length + 8) return false;
    for (let i = 0; i < SIGNATURE.length; i++) {
      if (pending[i] !== SIGNATURE[i]) throw new CopyFormatError('not a binary COPY stream');
    }
    const extension = view.getInt32(SIGNATURE.length + 4);
    const start = SIGNATURE.length + 8 + extension;
    if (pending.length < start) return false;
    this.at = start;
    this.headerRead = true;
    return true;
  }

  /** One tuple from `at` when the bytes hold all of it; false (nothing consumed) when they do not. */
  private readTuple(): boolean {
    const { pending, view, columns } = this;
    const end = pending.length;
    let at = this.at;
    if (end - at < 2) return false;
    const fields = view.getInt16(at);
    if (fields === -1) {
      this.at = at + 2;
      this.ended = true;
      return false;
    }
    if (fields !== FIELDS) throw new CopyFormatError(`a tuple of ${fields} fields, not ${FIELDS}`);
    at += 2;
    // at, cooling_unit_id: fixed lengths
    if (end - at < 12 + 8) return false;
    expectLength(view.getInt32(at), 8, 'at');
    const high = view.getInt32(at + 4);
    const low = view.getUint32(at + 8);
    expectLength(view.getInt32(at + 12), 4, 'cooling_unit_id');
    const unitId = view.getInt32(at + 16);
    at += 20;
    // specification_type: the label
    if (end - at < 4) return false;
    const labelLength = view.getInt32(at);
    at += 4;
    if (end - at < labelLength) return false;
    const type = labelIndex(pending, at, labelLength);
    at += labelLength;
    // value, sample_count, min, max
    if (end - at < 12 + 8 + 8) return false;
    expectLength(view.getInt32(at), 8, 'value');
    const value = view.getFloat64(at + 4);
    expectLength(view.getInt32(at + 12), 4, 'sample_count');
    const sampleCount = view.getInt32(at + 16);
    at += 20;
    const minLength = view.getInt32(at);
    if (minLength !== -1) expectLength(minLength, 8, 'min');
    if (end - at < 4 + Math.max(minLength, 0) + 4) return false;
    const min = minLength === -1 ? 0 : view.getFloat64(at + 4);
    at += 4 + Math.max(minLength, 0);
    const maxLength = view.getInt32(at);
    if (maxLength !== minLength) throw new CopyFormatError('min and max are NULL together or not at all');
    if (end - at < 4 + Math.max(maxLength, 0)) return false;
    const max = maxLength === -1 ? 0 : view.getFloat64(at + 4);
    at += 4 + Math.max(maxLength, 0);

    const row = columns.rows++;
    // microseconds since 2000 to since 1970: the int64 sum of the halves, with the low half's carry
    let sumLow = low + EPOCH_LOW;
    let carry = 0;
    if (sumLow >= TWO_TO_32) {
      sumLow -= TWO_TO_32;
      carry = 1;
    }
    this.timestampWords.setUint32(row * 8, sumLow, true);
    this.timestampWords.setInt32(row * 8 + 4, high + EPOCH_HIGH + carry, true);
    columns.coolingUnitIds[row] = unitId;
    columns.specificationTypes[row] = type;
    columns.values[row] = value;
    columns.sampleCounts[row] = sampleCount;
    columns.mins[row] = min;
    columns.maxes[row] = max;
    if (minLength === -1) columns.nulls++;
    else columns.present[row >> 3]! |= 1 << (row & 7);
    this.at = at;
    return true;
  }
}

function expectLength(length: number, expected: number, column: string) {
  if (length !== expected) {
    throw new CopyFormatError(length === -1 ? `${column} is NULL` : `${column} has ${length} bytes, not ${expected}`);
  }
}

function labelIndex(bytes: Uint8Array, at: number, length: number): number {
  for (let index = 0; index < LABEL_BYTES.length; index++) {
    const label = LABEL_BYTES[index]!;
    if (label.length !== length) continue;
    let same = true;
    for (let i = 0; i < length && same; i++) same = bytes[at + i] === label[i];
    if (same) return index;
  }
  throw new CopyFormatError(`an unknown specification_type: ${Buffer.from(bytes.subarray(at, at + length)).toString('latin1')}`);
}
