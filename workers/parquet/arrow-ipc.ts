// A bulk slice's columns (copy-columns.ts) as an Arrow IPC stream, the one form parquet-wasm takes
// them in (Table.fromIPCStream), written straight into one buffer the thread reuses for every
// batch. apache-arrow's Table and tableToIPC would build the same stream through fresh buffers a
// batch, garbage the thread's V8 frees only after tens of MB of it (its collector counts it as
// external memory), and loading that library costs a thread megabytes; only its flatbuffer
// classes (apache-arrow/fb/) are used here, for the messages' headers.
// The format (Arrow columnar format, "Serialization and Interprocess Communication"): a stream
// is messages, each the continuation marker 0xFFFFFFFF, an int32 length of the flatbuffer Message
// (padded so the body starts 8-aligned), that Message, then its body; here the schema, the
// dictionary of specification labels, one record batch, and the end marker (0xFFFFFFFF, 0).
import { Builder } from 'flatbuffers';
import { Buffer as BufferRegion } from 'apache-arrow/fb/buffer';
import { DictionaryBatch } from 'apache-arrow/fb/dictionary-batch';
import { DictionaryEncoding } from 'apache-arrow/fb/dictionary-encoding';
import { Endianness } from 'apache-arrow/fb/endianness';
import { Field } from 'apache-arrow/fb/field';
import { FieldNode } from 'apache-arrow/fb/field-node';
import { FloatingPoint } from 'apache-arrow/fb/floating-point';
import { Int } from 'apache-arrow/fb/int';
import { Message } from 'apache-arrow/fb/message';
import { MessageHeader } from 'apache-arrow/fb/message-header';
import { MetadataVersion } from 'apache-arrow/fb/metadata-version';
import { Precision } from 'apache-arrow/fb/precision';
import { RecordBatch } from 'apache-arrow/fb/record-batch';
import { Schema } from 'apache-arrow/fb/schema';
import { TimeUnit } from 'apache-arrow/fb/time-unit';
import { Timestamp } from 'apache-arrow/fb/timestamp';
import { Type } from 'apache-arrow/fb/type';
import { Utf8 } from 'apache-arrow/fb/utf8';
import { SPECIFICATION_LABELS, type SensorColumns } from './copy-columns.js';

const CONTINUATION = 0xffffffff;
const pad8 = (n: number) => (n + 7) & ~7;

/** Message flatbuffers are a few hundred bytes; the builder grows if one is not. */
const builder = new Builder(1024);

/** A Message of `header` (built by `build`) as the flatbuffer bytes, copied out of the shared builder. */
function message(headerType: MessageHeader, bodyLength: number, build: (b: Builder) => number): Uint8Array {
  builder.clear();
  const header = build(builder);
  Message.startMessage(builder);
  Message.addVersion(builder, MetadataVersion.V5);
  Message.addHeaderType(builder, headerType);
  Message.addHeader(builder, header);
  Message.addBodyLength(builder, BigInt(bodyLength));
  builder.finish(Message.endMessage(builder));
  return builder.asUint8Array();
}

/** Writes an encapsulated message's prefix and metadata at `at`; the body goes right after (returned). */
function writeMetadata(out: Uint8Array, view: DataView, at: number, metadata: Uint8Array): number {
  const padded = pad8(8 + metadata.length) - 8;
  view.setUint32(at, CONTINUATION, true);
  view.setInt32(at + 4, padded, true);
  out.set(metadata, at + 8);
  out.fill(0, at + 8 + metadata.length, at + 8 + padded);
  return at + 8 + padded;
}

const metadataBytes = (metadata: Uint8Array) => pad8(8 + metadata.length);

// --- the schema and the labels' dictionary: the same for every batch, written once -----------

function field(b: Builder, name: string, nullable: boolean, typeType: Type, type: number, dictionary = 0): number {
  const nameOffset = b.createString(name);
  const children = Field.createChildrenVector(b, []);
  Field.startField(b);
  Field.addName(b, nameOffset);
  Field.addNullable(b, nullable);
  Field.addTypeType(b, typeType);
  Field.addType(b, type);
  if (dictionary) Field.addDictionary(b, dictionary);
  Field.addChildren(b, children);
  return Field.endField(b);
}

const schemaMessage = message(MessageHeader.Schema, 0, (b) => {
  const int = (bits: number) => Int.createInt(b, bits, true);
  const double = () => FloatingPoint.createFloatingPoint(b, Precision.DOUBLE);
  const utc = b.createString('UTC');
  const fields = [
    field(b, 'timestamp', false, Type.Timestamp, Timestamp.createTimestamp(b, TimeUnit.MICROSECOND, utc)),
    field(b, 'cooling_unit_id', false, Type.Int, int(32)),
    (() => {
      // the labels as a dictionary of Utf8, indexed by int8s: the columns' specificationTypes as they are
      const indexType = int(8);
      DictionaryEncoding.startDictionaryEncoding(b);
      DictionaryEncoding.addId(b, 0n);
      DictionaryEncoding.addIndexType(b, indexType);
      DictionaryEncoding.addIsOrdered(b, false);
      const dictionary = DictionaryEncoding.endDictionaryEncoding(b);
      return field(b, 'specification_type', false, Type.Utf8, Utf8.createUtf8(b), dictionary);
    })(),
    field(b, 'value', false, Type.FloatingPoint, double()),
    field(b, 'sample_count', false, Type.Int, int(32)),
    field(b, 'min', true, Type.FloatingPoint, double()),
    field(b, 'max', true, Type.FloatingPoint, double()),
  ];
  const fieldsVector = Schema.createFieldsVector(b, fields);
  Schema.startSchema(b);
  Schema.addEndianness(b, Endianness.Little);
  Schema.addFields(b, fieldsVector);
  return Schema.endSchema(b);
}).slice();

/** A record batch's header: its length, a node a column (length, null count), a buffer region each. */
function recordBatch(b: Builder, length: number, nodes: [number, number][], buffers: [number, number][]): number {
  RecordBatch.startNodesVector(b, nodes.length);
  for (const [nodeLength, nulls] of nodes.toReversed()) FieldNode.createFieldNode(b, BigInt(nodeLength), BigInt(nulls));
  const nodesVector = b.endVector();
  RecordBatch.startBuffersVector(b, buffers.length);
  for (const [offset, bytes] of buffers.toReversed()) BufferRegion.createBuffer(b, BigInt(offset), BigInt(bytes));
  const buffersVector = b.endVector();
  RecordBatch.startRecordBatch(b);
  RecordBatch.addLength(b, BigInt(length));
  RecordBatch.addNodes(b, nodesVector);
  RecordBatch.addBuffers(b, buffersVector);
  return RecordBatch.endRecordBatch(b);
}

/** The dictionary's body: the labels as Utf8 (no validity, int32 offsets, then their bytes). */
const labelBytes = SPECIFICATION_LABELS.map((label) => new TextEncoder().encode(label));
const labelOffsets = new Int32Array(labelBytes.length + 1);
labelBytes.forEach((bytes, i) => (labelOffsets[i + 1] = labelOffsets[i]! + bytes.length));
const dictionaryBody = new Uint8Array(pad8(labelOffsets.byteLength) + pad8(labelOffsets.at(-1)!));
dictionaryBody.set(new Uint8Array(labelOffsets.buffer));
labelBytes.forEach((bytes, i) => dictionaryBody.set(bytes, pad8(labelOffsets.byteLength) + labelOffsets[i]!));

const dictionaryMessage = message(MessageHeader.DictionaryBatch, dictionaryBody.length, (b) => {
  const data = recordBatch(
    b,
    labelBytes.length,
    [[labelBytes.length, 0]],
    [
      [0, 0],
      [0, labelOffsets.byteLength],
      [pad8(labelOffsets.byteLength), labelOffsets.at(-1)!],
    ],
  );
  DictionaryBatch.startDictionaryBatch(b);
  DictionaryBatch.addId(b, 0n);
  DictionaryBatch.addData(b, data);
  DictionaryBatch.addIsDelta(b, false);
  return DictionaryBatch.endDictionaryBatch(b);
}).slice();

/** The stream up to its record batch, the same bytes for every batch. */
const streamHead = (() => {
  const head = new Uint8Array(metadataBytes(schemaMessage) + metadataBytes(dictionaryMessage) + dictionaryBody.length);
  const view = new DataView(head.buffer);
  const body = writeMetadata(head, view, writeMetadata(head, view, 0, schemaMessage), dictionaryMessage);
  head.set(dictionaryBody, body);
  return head;
})();

// --- the record batch ----------------------------------------------------------------------

/** The columns in the schema's order: bytes a value, and whether it has a validity bitmap (min and max). */
const COLUMNS = [
  { take: (c: SensorColumns) => c.timestamps, bytes: 8, nullable: false },
  { take: (c: SensorColumns) => c.coolingUnitIds, bytes: 4, nullable: false },
  { take: (c: SensorColumns) => c.specificationTypes, bytes: 1, nullable: false },
  { take: (c: SensorColumns) => c.values, bytes: 8, nullable: false },
  { take: (c: SensorColumns) => c.sampleCounts, bytes: 4, nullable: false },
  { take: (c: SensorColumns) => c.mins, bytes: 8, nullable: true },
  { take: (c: SensorColumns) => c.maxes, bytes: 8, nullable: true },
];

/** A batch's body at `rows` rows, at most: each column's bitmap (when it has one), then its values, each padded to 8 bytes. */
const bodyBytes = (rows: number) =>
  COLUMNS.reduce((sum, column) => sum + (column.nullable ? pad8(Math.ceil(rows / 8)) : 0) + pad8(rows * column.bytes), 0);

/** Room for a batch's header: 7 nodes and 14 buffers of 16 bytes and the tables around them. */
const BATCH_METADATA_ROOM = 1024;

/**
 * Writes batches of up to `capacity` rows as whole IPC streams into one buffer of its own: the
 * stream write() returns is a view of it, good until the next write().
 */
export class IpcStreamWriter {
  private readonly out: Uint8Array;
  private readonly view: DataView;

  constructor(readonly capacity: number) {
    this.out = new Uint8Array(streamHead.length + BATCH_METADATA_ROOM + bodyBytes(capacity) + 8);
    this.out.set(streamHead);
    this.view = new DataView(this.out.buffer);
  }

  write(columns: SensorColumns): Uint8Array {
    const rows = columns.rows;
    if (rows > this.capacity) throw new RangeError(`a batch of ${rows} rows, more than ${this.capacity}`);
    const nodes: [number, number][] = [];
    const buffers: [number, number][] = [];
    let offset = 0;
    const bitmapBytes = Math.ceil(rows / 8);
    for (const column of COLUMNS) {
      const nulls = column.nullable ? columns.nulls : 0;
      nodes.push([rows, nulls]);
      // no bitmap (a region of no bytes) where nothing is null, as Arrow allows
      const bitmap = nulls > 0 ? bitmapBytes : 0;
      buffers.push([offset, bitmap]);
      offset += pad8(bitmap);
      buffers.push([offset, rows * column.bytes]);
      offset += pad8(rows * column.bytes);
    }
    const metadata = message(MessageHeader.RecordBatch, offset, (b) => recordBatch(b, rows, nodes, buffers));
    if (metadataBytes(metadata) > BATCH_METADATA_ROOM) throw new Error('a record batch header larger than its room');
    let at = writeMetadata(this.out, this.view, streamHead.length, metadata);
    const bitmap = columns.present.subarray(0, bitmapBytes);
    for (const [index, column] of COLUMNS.entries()) {
      const [bitmapRegion, valuesRegion] = [buffers[index * 2]!, buffers[index * 2 + 1]!];
      if (bitmapRegion[1] > 0) this.out.set(bitmap, at + bitmapRegion[0]);
      const values = column.take(columns);
      this.out.set(new Uint8Array(values.buffer, values.byteOffset, valuesRegion[1]), at + valuesRegion[0]);
    }
    // the padding between regions, so that no byte of an earlier batch is read as this one's
    this.zeroGaps(at, buffers, offset);
    at += offset;
    this.view.setUint32(at, CONTINUATION, true);
    this.view.setUint32(at + 4, 0, true);
    return this.out.subarray(0, at + 8);
  }

  private zeroGaps(at: number, buffers: [number, number][], end: number) {
    let filled = 0;
    for (const [offset, bytes] of buffers) {
      if (offset > filled) this.out.fill(0, at + filled, at + offset);
      filled = offset + bytes;
    }
    if (end > filled) this.out.fill(0, at + filled, at + end);
  }
}
