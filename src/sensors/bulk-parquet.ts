// Bulk slices as Parquet: a slice's binary COPY stream goes to a Piscina thread
// (workers/parquet-thread.ts) that decodes and encodes it, and the file comes back a row group at
// a time. The event loop only moves buffers, as it does for CSV: COPY bytes out (copied off pg's
// socket buffers, then moved), encoded row groups in. It sends bytes only while fewer than
// INPUT_WINDOW_BYTES wait on the thread and the response is not backed up, so a slow client
// stops the thread and, through the paused COPY stream, PostgreSQL. A stream that fails (the
// database, the thread, the client gone) destroys the file's stream: the response is cut, never
// ended, and the COPY's connection is closed (src/sensors/bulk.ts streamSlice).
import { Readable } from 'node:stream';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { FromThread, ParquetSummary, ParquetTask, ToThread } from '../../workers/parquet-thread.js';

/**
 * COPY bytes sent to the thread and not yet decoded. The thread keeps what it decoded as the
 * row group it is building, so this only bounds the queue in front of it: a few of the COPY
 * stream's 256 KB buffers.
 */
export const INPUT_WINDOW_BYTES = 1024 * 1024;
/** Encoded bytes the file's stream holds before it stops feeding the thread (about a row group's worth). */
const OUTPUT_HIGH_WATER_BYTES = 1024 * 1024;
/** How long an aborted task may take to notice; then its thread is ended (Piscina terminates it). */
const ABORT_GRACE_MS = 5_000;

export interface ParquetEncoderOptions {
  /** threads, each encoding one stream at a time */
  threads: number;
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
export function parquetWorkerFile(moduleUrl: string = import.meta.url): URL {
  const extension = new URL(moduleUrl).pathname.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`../../workers/parquet-thread.${extension}`, moduleUrl);
}

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
  const workers = () => {
    if (pool) return pool;
    pool = new Piscina({
      filename: parquetWorkerFile().href,
      minThreads: 0,
      maxThreads: options.threads,
      idleTimeout: options.idleTimeoutMs ?? 60_000,
      concurrentTasksPerWorker: 1,
      ...(options.heapLimitMb ? { resourceLimits: { maxOldGenerationSizeMb: options.heapLimitMb, maxYoungGenerationSizeMb: 24 } } : {}),
    });
    allPools.add(pool);
    return pool;
  };

  function encode(copy: Readable): Readable {
    const { port1: port, port2 } = new MessageChannel();
    const stopTask = new AbortController();
    let inFlight = 0;
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
      copy.off('readable', feed);
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
      while (inFlight < INPUT_WINDOW_BYTES && file.readableLength < OUTPUT_HIGH_WATER_BYTES) {
        const chunk = copy.read() as Buffer | null;
        if (chunk === null) return;
        // pg's buffers are views of its socket reads: the bytes are copied into a buffer of their own, which moves
        const bytes = new Uint8Array(chunk.byteLength);
        bytes.set(chunk);
        inFlight += bytes.byteLength;
        send({ kind: 'bytes', bytes: bytes.buffer }, [bytes.buffer]);
      }
    }

    port.on('message', (message: FromThread) => {
      if (settled) return;
      switch (message.kind) {
        case 'consumed':
          inFlight -= message.bytes;
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
    copy.on('readable', feed);
    copy.once('end', () => {
      copyEnded = true;
      if (settled) return;
      send({ kind: 'end' });
      finish();
    });
    copy.once('error', fail);
    // destroyed without an error (the consumer went away): not an end
    copy.once('close', () => {
      if (!copyEnded) fail(new Error('the COPY stream closed before its end'));
    });

    const task = workers().run({ port: port2 }, { transferList: [port2], signal: stopTask.signal });
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
