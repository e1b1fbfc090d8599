// Piscina task file: a bulk slice as Parquet (GET /api/v1/sensor-data/bulk?format=parquet), one
// task a stream. The main thread moves the slice's binary COPY bytes here over a MessagePort
// (src/sensors/bulk-parquet.ts); the thread decodes them into columns (workers/parquet/) and
// encodes a row group at a time with parquet-wasm (arrow-rs), moving each encoded row group back.
// It only gets bytes as the main thread sends them, which it does as the client reads: a slow
// client holds the thread at about two row groups, never the whole slice.
// A default export on purpose: every thread preloads the file's default handler when it starts.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import type { MessagePort } from 'node:worker_threads';
import {
  Dictionary,
  Field,
  Float64,
  Int32,
  Int8,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  tableToIPC,
  TimestampMicrosecond,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
// the Node build: its wasm is compiled when the module loads (the default entry needs initWasm())
import * as parquet from 'parquet-wasm/node';
import { CopyColumns, type SensorColumns, SPECIFICATION_LABELS } from './parquet/copy-columns.js';

/** Rows a row group holds: each is encoded, and sent, whole (docs/benchmarks.md, "Parquet writer"). */
export const ROW_GROUP_ROWS = 131_072;

/** The task: the port the bytes come in and the file goes out on. */
export interface ParquetTask {
  port: MessagePort;
}

/** main -> thread: COPY bytes (moved), the end of the COPY, or stop now (the stream failed or the client left). */
export type ToThread = { kind: 'bytes'; bytes: ArrayBuffer } | { kind: 'end' } | { kind: 'abort' };

/**
 * thread -> main: input bytes decoded (the main thread's window of bytes in flight shrinks by
 * them), a piece of the file (moved), the file complete (after its last piece), or why it failed.
 * The file's end is only ever `done`: parquet-wasm closes its output normally even when its input
 * failed, so a last piece alone says nothing.
 */
export type FromThread =
  | { kind: 'consumed'; bytes: number }
  | { kind: 'piece'; bytes: ArrayBuffer }
  | { kind: 'done'; rows: number; bytes: number }
  | { kind: 'failed'; message: string };

/** What the task resolves with (the main thread watches the port, not this). */
export interface ParquetSummary {
  rows: number;
  bytes: number;
  outcome: 'done' | 'failed' | 'aborted';
}

/**
 * Encoding is batch work and the event loop is not: on Linux the thread lowers its own scheduling
 * priority, as the rollup threads do (workers/rollup-thread.ts), so the event loop wins a core.
 */
const PARQUET_THREAD_NICE = 10;
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), PARQUET_THREAD_NICE);
} catch {
  // not Linux, or not allowed: the thread keeps the default priority
}

const specificationType = new Dictionary(new Utf8(), new Int8(), 0, false);
const specificationLabels = vectorFromArray([...SPECIFICATION_LABELS], new Utf8());
const schema = new Schema([
  new Field('timestamp', new TimestampMicrosecond('UTC'), false),
  new Field('cooling_unit_id', new Int32(), false),
  new Field('specification_type', specificationType, false),
  new Field('value', new Float64(), false),
  new Field('sample_count', new Int32(), false),
  new Field('min', new Float64(), true),
  new Field('max', new Float64(), true),
]);

/**
 * ZSTD pages; the timestamps, ascending and evenly spaced, as DELTA_BINARY_PACKED without a
 * dictionary; a file format every reader takes (writer version 1). A new instance per file:
 * parquet-wasm consumes it.
 */
function writerProperties(): parquet.WriterProperties {
  return new parquet.WriterPropertiesBuilder()
    .setCompression(parquet.Compression.ZSTD)
    .setMaxRowGroupSize(ROW_GROUP_ROWS)
    .setColumnDictionaryEnabled('timestamp', false)
    .setColumnEncoding('timestamp', parquet.Encoding.DELTA_BINARY_PACKED)
    .setCreatedBy('coldtrack-api')
    .build();
}

/** The columns' first `rows` as parquet-wasm's RecordBatch (Arrow IPC in between: apache-arrow's own batches do not cross). */
function wasmBatch(columns: SensorColumns): parquet.RecordBatch {
  const n = columns.rows;
  const f = schema.fields;
  const bitmap = columns.present.subarray(0, Math.ceil(n / 8));
  const children = [
    makeData({ type: f[0]!.type as TimestampMicrosecond, length: n, data: columns.timestamps.subarray(0, n) }),
    makeData({ type: f[1]!.type as Int32, length: n, data: columns.coolingUnitIds.subarray(0, n) }),
    makeData({ type: specificationType, length: n, data: columns.specificationTypes.subarray(0, n), dictionary: specificationLabels }),
    makeData({ type: f[3]!.type as Float64, length: n, data: columns.values.subarray(0, n) }),
    makeData({ type: f[4]!.type as Int32, length: n, data: columns.sampleCounts.subarray(0, n) }),
    makeData({ type: f[5]!.type as Float64, length: n, nullCount: columns.nulls, nullBitmap: bitmap, data: columns.mins.subarray(0, n) }),
    makeData({ type: f[6]!.type as Float64, length: n, nullCount: columns.nulls, nullBitmap: bitmap, data: columns.maxes.subarray(0, n) }),
  ];
  const batch = new RecordBatch(schema, makeData({ type: new Struct(f), length: n, nullCount: 0, children }));
  const table = parquet.Table.fromIPCStream(tableToIPC(new Table([batch]), 'stream'));
  try {
    const [wasm] = table.recordBatches();
    return wasm!;
  } finally {
    table.free();
  }
}

class Aborted extends Error {}

/** The port's messages in order, awaited one at a time; an abort (or the main thread's side closing) ends every wait. */
function inbox(port: MessagePort) {
  const queued: ToThread[] = [];
  let waiting: ((message: ToThread) => void) | null = null;
  const deliver = (message: ToThread) => {
    if (message.kind === 'abort') queued.unshift(message);
    else queued.push(message);
    const wake = waiting;
    waiting = null;
    wake?.(queued.shift()!);
  };
  port.on('message', deliver);
  port.once('close', () => deliver({ kind: 'abort' }));
  return {
    next(): Promise<ToThread> {
      const message = queued.shift();
      if (message) return Promise.resolve(message);
      return new Promise((resolve) => (waiting = resolve));
    },
    aborted: () => queued[0]?.kind === 'abort',
  };
}

export default async function encodeParquet({ port }: ParquetTask): Promise<ParquetSummary> {
  const messages = inbox(port);
  const post = (message: FromThread, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
  const decoder = new CopyColumns(ROW_GROUP_ROWS);
  let rows = 0;
  let batches = 0;
  let inputEnded = false;
  let failure: Error | null = null;

  // the next row group's columns, or null after the last; reads bytes as it needs them
  const nextGroup = async (): Promise<SensorColumns | null> => {
    decoder.reset();
    for (;;) {
      decoder.decode();
      if (decoder.full || decoder.ended) break;
      if (inputEnded) throw new Error('the COPY ended in the middle of its data');
      const message = await messages.next();
      if (message.kind === 'abort') throw new Aborted('aborted');
      if (message.kind === 'end') inputEnded = true;
      else {
        decoder.push(new Uint8Array(message.bytes));
        post({ kind: 'consumed', bytes: message.bytes.byteLength });
      }
    }
    if (decoder.columns.rows === 0) return null;
    rows += decoder.columns.rows;
    return decoder.columns;
  };

  const input = new ReadableStream<parquet.RecordBatch>(
    {
      async pull(controller) {
        try {
          const group = await nextGroup();
          // an empty slice is still a file with the schema: one batch of no rows
          if (group || batches === 0) {
            batches++;
            controller.enqueue(wasmBatch(decoder.columns));
          } else controller.close();
        } catch (error) {
          failure = error as Error;
          controller.error(error);
        }
      },
    },
    { highWaterMark: 0 },
  );

  let bytes = 0;
  try {
    const output = (await parquet.transformParquetStream(input, writerProperties())) as ReadableStream<Uint8Array>;
    const reader = output.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || failure || messages.aborted()) break;
        // a view of the wasm memory is copied out; a piece of its own is moved as it is
        const piece = value.byteOffset === 0 && value.byteLength === value.buffer.byteLength ? value : value.slice();
        bytes += piece.byteLength;
        post({ kind: 'piece', bytes: piece.buffer as ArrayBuffer }, [piece.buffer as ArrayBuffer]);
      }
    } finally {
      // cancelling the output does not cancel its input: the input was errored or ran out above
      await reader.cancel().catch(() => {});
    }
  } catch (error) {
    failure ??= error as Error;
  }
  if (failure instanceof Aborted || messages.aborted()) {
    port.close();
    return { rows, bytes, outcome: 'aborted' };
  }
  if (failure) {
    post({ kind: 'failed', message: failure.message });
    port.close();
    return { rows, bytes, outcome: 'failed' };
  }
  if (!decoder.complete) {
    post({ kind: 'failed', message: 'bytes after the COPY trailer' });
    port.close();
    return { rows, bytes, outcome: 'failed' };
  }
  post({ kind: 'done', rows, bytes });
  port.close();
  return { rows, bytes, outcome: 'done' };
}
