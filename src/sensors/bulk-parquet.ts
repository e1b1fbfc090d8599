// Bulk slices as Parquet: a slice's binary COPY stream goes to a Piscina thread
// (workers/parquet-thread.ts) that decodes and encodes it, and the file comes back a row group at
// a time. The event loop only moves bytes, as it does for CSV: COPY chunks copied into the slots
// of a SharedArrayBuffer the thread reads, encoded row groups moved back. It fills a slot only
// while one is free (INPUT_WINDOW_BYTES in all) and the response is not backed up, so a slow
// client stops the thread and, through the paused COPY stream, PostgreSQL. No buffer is allocated
// a chunk on either side: the slots are reused, by the stream and by the next one. A stream that
// fails (the database, the thread, the client gone) destroys the file's stream: the response is
// cut, never ended, and the COPY's connection is closed (src/sensors/bulk.ts streamSlice).
import { Readable } from 'node:stream';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { FromThread, ParquetSummary, ParquetTask, ToThread } from '../../workers/parquet-thread.js';
import { threadFileFor } from '../thread-file.js';

/**
 * COPY bytes sent to the thread and not yet decoded. The thread keeps what it decoded as the
 * batch it is building, so this only bounds the queue in front of it: a few slots, each about
 * one of the COPY stream's 256 KB buffers.
 */
export const INPUT_WINDOW_BYTES = 1024 * 1024;
const SLOT_BYTES = 256 * 1024;
/** Encoded bytes the file's stream holds before it stops feeding the thread (about a row group's worth). */
const OUTPUT_HIGH_WATER_BYTES = 1024 * 1024;
/** How long an aborted task may take to notice; then its thread is ended (Piscina terminates it). */
const ABORT_GRACE_MS = 5_000;

export interface ParquetEncoderOptions {
  /** threads */
  threads: number;
  /** streams a thread encodes side by side (1 when not given): one waiting on its client or its COPY leaves the thread to the others */
  streamsPerThread?: number;
  /** each thread's V8 old-space limit in MB (config.heapLimitMb); parquet-wasm's memory is outside it */
  heapLimitMb?: number | undefined;
  /** how long an idle thread lives (ms) */
  idleTimeoutMs?: number;
}

export interface ParquetEncoder {
  /** The file of a slice's binary COPY stream; destroying either stream ends both, and the thread's task. */
  encode(copy: Readable): Readable;
  /** Tasks on the pool (running or queued), for tests and metrics. */
  tasks(): number;
  /** Whether the pool (and so any thread) was ever started. */
  started(): boolean;
  close(): Promise<void>;
}

/**
 * The task file next to this module's build: workers/parquet-thread.ts under tsx (threads inherit
 * `--import tsx`), workers/parquet-thread.js from dist/ (as src/analytics/rollups.ts finds its own).
 */
export const parquetWorkerFile = (moduleUrl: string = import.meta.url): URL => threadFileFor(moduleUrl, 'parquet-thread');

// the tasks and pools of every encoder of the process, for the tests' leak checks
const allTasks = new Set<Promise<unknown>>();
const allPools = new Set<Piscina>();
/** Parquet tasks on a pool (running or queued) in this process. */
export const parquetTasksRunning = (): number => allTasks.size;
/** Parquet thread pools started and not closed in this process. */
export const parquetPoolsOpen = (): number => allPools.size;

export function createParquetEncoder(options: ParquetEncoderOptions): ParquetEncoder {
  // created on the first Parquet stream: an app that never serves one starts no thread
  let pool: Piscina<ParquetTask, ParquetSummary> | null = null;
  const running = new Set<Promise<unknown>>();
  // the input slots of streams that ended, for the next ones: a SharedArrayBuffer is freed only
  // once both threads' collectors let it go, so one a stream would pile up on a quiet event loop
  const spareInputs: SharedArrayBuffer[] = [];
  const workers = () => {
    if (pool) return pool;
    pool = new Piscina({
      filename: parquetWorkerFile().href,
      minThreads: 0,
      maxThreads: options.threads,
      idleTimeout: options.idleTimeoutMs ?? 60_000,
      concurrentTasksPerWorker: options.streamsPerThread ?? 1,
      ...(options.heapLimitMb ? { resourceLimits: { maxOldGenerationSizeMb: options.heapLimitMb, maxYoungGenerationSizeMb: 24 } } : {}),
    });
    allPools.add(pool);
    return pool;
  };

  function encode(copy: Readable): Readable {
    const { port1: port, port2 } = new MessageChannel();
    const stopTask = new AbortController();
    const input = spareInputs.pop() ?? new SharedArrayBuffer(INPUT_WINDOW_BYTES);
    const slots = new Uint8Array(input);
    const freeSlots = Array.from({ length: INPUT_WINDOW_BYTES / SLOT_BYTES }, (_, slot) => slot);
    // the slot being filled, and the part of a COPY chunk not yet copied into one (the COPY waits meanwhile)
    let filling: { slot: number; length: number } | null = null;
    let rest: Buffer | null = null;
    let endSent = false;
    let copyEnded = false;
    let encoded = false;
    // settled: finished (the whole file pushed) or stopped (failed, destroyed); nothing is sent or pushed after
    let settled = false;
    let finished = false;

    const file = new Readable({
      highWaterMark: OUTPUT_HIGH_WATER_BYTES,
      read: () => feed(),
      destroy: (error, callback) => {
        stop();
        callback(error);
      },
    });
    const send = (message: ToThread, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

    // the one way out on failure: the file is destroyed (the response cut), the COPY with it, the task told
    const fail = (error: Error) => {
      if (!finished && !file.destroyed) file.destroy(error);
    };
    function stop() {
      if (settled) return;
      settled = true;
      copy.off('data', take);
      if (!copy.destroyed && !copyEnded) copy.destroy(new Error('the Parquet stream ended before its COPY'));
      send({ kind: 'abort' });
      port.close();
      // a task that does not notice within the grace period loses its thread
      const timer = setTimeout(() => stopTask.abort(new Error('the Parquet task did not stop')), ABORT_GRACE_MS);
      timer.unref();
      void task.finally(() => clearTimeout(timer)).catch(() => {});
    }
    const finish = () => {
      if (settled || !encoded || !copyEnded) return;
      settled = true;
      finished = true;
      port.close();
      file.push(null);
    };

    function feed() {
      if (settled) return;
      // the thread is fed while it is behind and the client keeps up (the file's buffer below its mark)
      while (rest !== null) {
        if (!filling) {
          if (freeSlots.length === 0 || file.readableLength >= OUTPUT_HIGH_WATER_BYTES) break;
          filling = { slot: freeSlots.pop()!, length: 0 };
        }
        const taken = Math.min(rest.length, SLOT_BYTES - filling.length);
        slots.set(taken === rest.length ? rest : rest.subarray(0, taken), filling.slot * SLOT_BYTES + filling.length);
        filling.length += taken;
        rest = taken === rest.length ? null : rest.subarray(taken);
        if (filling.length === SLOT_BYTES) sendSlot();
      }
      if (copyEnded && rest === null && !endSent) {
        if (filling) sendSlot();
        endSent = true;
        send({ kind: 'end' });
      }
      // the COPY flows while its last chunk found room
      if (rest === null) copy.resume();
      else copy.pause();
    }
    function sendSlot() {
      send({ kind: 'bytes', slot: filling!.slot, length: filling!.length });
      filling = null;
    }
    // a chunk at a time as the COPY stream pushed it: read() would join what it holds into new buffers
    function take(chunk: Buffer) {
      rest = chunk;
      feed();
    }

    port.on('message', (message: FromThread) => {
      if (settled) return;
      switch (message.kind) {
        case 'consumed':
          freeSlots.push(message.slot);
          feed();
          return;
        case 'piece':
          file.push(Buffer.from(message.bytes));
          return;
        case 'done':
          encoded = true;
          finish();
          return;
        case 'failed':
          fail(new Error(`Parquet encoding failed: ${message.message}`));
          return;
      }
    });
    copy.on('data', take);
    copy.once('end', () => {
      copyEnded = true;
      feed();
      finish();
    });
    copy.once('error', fail);
    // destroyed without an error (the consumer went away): not an end
    copy.once('close', () => {
      if (!copyEnded) fail(new Error('the COPY stream closed before its end'));
    });

    const task = workers().run({ port: port2, input, slotBytes: SLOT_BYTES }, { transferList: [port2], signal: stopTask.signal });
    running.add(task);
    allTasks.add(task);
    void task
      .then(
        (summary) => {
          if (summary.outcome !== 'done') fail(new Error(`the Parquet task ended ${summary.outcome}`));
        },
        (error: Error) => fail(error),
      )
      .finally(() => {
        // the task is over: the thread reads the slots no more
        spareInputs.push(input);
        running.delete(task);
        allTasks.delete(task);
      });
    return file;
  }

  return {
    encode,
    tasks: () => running.size,
    started: () => pool !== null,
    async close() {
      // streams still running are cut (their responses destroyed): the threads end with the app
      if (!pool) return;
      const closing = pool;
      pool = null;
      await closing.destroy();
      allPools.delete(closing);
    },
  };
}
