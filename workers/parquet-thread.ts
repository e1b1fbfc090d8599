// Piscina task file: a bulk slice as Parquet (GET /api/v1/sensor-data/bulk?format=parquet), one
// task a stream, a few side by side on a thread. The main thread copies the slice's binary COPY
// bytes into slots of a SharedArrayBuffer (src/sensors/bulk-parquet.ts); the thread decodes them
// into columns (workers/parquet/), a batch at a time, and hands each batch to parquet-wasm
// (arrow-rs) as Arrow IPC, which encodes row groups of several batches and sends each back whole.
// It only gets bytes as the main thread sends them, which it does as the client reads: a slow
// client holds the thread at about a row group, never the whole slice.
// Memory, as a worker's RSS counts it: the thread allocates no buffer a chunk or a batch for its
// collector to free (slots, columns and the IPC buffer are reused), so what it holds is itself,
// the wasm memory's high-water mark and the row groups in progress (docs/benchmarks.md, "Parquet
// writer").
// A default export on purpose: every thread preloads the file's default handler when it starts.
import { readFileSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import type { MessagePort } from 'node:worker_threads';
import * as parquet from 'parquet-wasm/esm';
import { IpcStreamWriter } from './parquet/arrow-ipc.js';
import { CopyColumns, type SensorColumns } from './parquet/copy-columns.js';

/** Rows a row group holds: each is encoded, and sent, whole (docs/benchmarks.md, "Parquet writer"). */
export const ROW_GROUP_ROWS = 131_072;
/**
 * Rows a batch handed to the writer holds, a fraction of a row group: the writer encodes and
 * compresses each as it comes, so the wasm memory holds a batch, not a row group, of raw columns
 * (that memory never shrinks back), and the decoder's and IPC buffers are that small too. The
 * row groups do not depend on it (their pages may end elsewhere).
 */
export const BATCH_ROWS = 16_384;

/** The task: the slots the bytes come in, and the port that says which hold bytes and takes the file out. */
export interface ParquetTask {
  port: MessagePort;
  /** the slots the main thread copies COPY bytes into, each `slotBytes` long */
  input: SharedArrayBuffer;
  slotBytes: number;
}

/** main -> thread: COPY bytes (a slot's first `length`), the end of the COPY, or stop now (the stream failed or the client left). */
export type ToThread = { kind: 'bytes'; slot: number; length: number } | { kind: 'end' } | { kind: 'abort' };

/**
 * thread -> main: a slot read (its bytes are the decoder's now: the main thread may fill it again),
 * a piece of the file (moved), the file complete (after its last piece), or why it failed.
 * The file's end is only ever `done`: parquet-wasm closes its output normally even when its input
 * failed, so a last piece alone says nothing.
 */
export type FromThread =
  | { kind: 'consumed'; slot: number }
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
 * Nice 19 measured no better (docs/benchmarks.md, "Tried and left out").
 */
const PARQUET_THREAD_NICE = 10;
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), PARQUET_THREAD_NICE);
} catch {
  // not Linux, or not allowed: the thread keeps the default priority
}

// The wasm is compiled from bytes read here, then dropped: parquet-wasm's Node build (parquet-wasm/node)
// keeps its copy of them, megabytes, for as long as the thread lives.
parquet.initSync({ module: readFileSync(new URL(import.meta.resolve('parquet-wasm/esm/parquet_wasm_bg.wasm'))) });

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

/** The columns' first `rows` as parquet-wasm's RecordBatch: the IPC stream is copied into the wasm memory and read there. */
function wasmBatch(columns: SensorColumns): parquet.RecordBatch {
  const table = parquet.Table.fromIPCStream(ipc.write(columns));
  try {
    const [wasm] = table.recordBatches();
    return wasm!;
  } finally {
    table.free();
  }
}

// The buffers a stream needs, kept for the thread's next streams rather than left to the collector:
// the IPC writer's is read only within wasmBatch(), so the thread's streams share one; a decoder a
// stream running on the thread (src/sensors/bulk-parquet.ts runs up to a few at a time).
const ipc = new IpcStreamWriter(BATCH_ROWS);
const spareDecoders: CopyColumns[] = [];

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

export default async function encodeParquet(task: ParquetTask): Promise<ParquetSummary> {
  const decoder = spareDecoders.pop() ?? new CopyColumns(BATCH_ROWS);
  decoder.restart();
  try {
    return await encodeStream(task, decoder);
  } finally {
    spareDecoders.push(decoder);
  }
}

async function encodeStream({ port, input: slots, slotBytes }: ParquetTask, decoder: CopyColumns): Promise<ParquetSummary> {
  const messages = inbox(port);
  const post = (message: FromThread, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
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
        decoder.push(new Uint8Array(slots, message.slot * slotBytes, message.length));
        post({ kind: 'consumed', slot: message.slot });
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
