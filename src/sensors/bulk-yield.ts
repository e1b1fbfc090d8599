// Bulk pulls are background work. A pull keeps a COPY backend, the compressor (or the Parquet
// thread) and this event loop's share of moving bytes busy for as long as it runs; on a machine
// whose cores the pages also need, the pages then wait for a core, and their latency is the
// event loop's delay. So while this process also answers other requests and its event loop runs
// late, every bulk stream of the process holds its next chunk until the loop has been on time
// for a while: the held stream stops its COPY (the socket fills, and PostgreSQL waits on it), the
// pages get the cores back, and the pulls go on with what is left (a tenth of their pace at least:
// a hold lasts a second at most, then they flow 100 ms). A process that only streams (a full
// export) never holds. Like PostgreSQL's cost-based vacuum delay, it trades the
// background work's speed for the foreground's latency; BULK_YIELD_LAG_MS sets where (0, the
// default: never; docs/operations.md says why it is off).
// bench P5 (bulk-*-beside-mixed) measures the event loop beside pulls, with the pulls' rate.
import { pipeline, type Readable, Transform } from 'node:stream';
import { performance } from 'node:perf_hooks';

/** How often the event loop's lateness is sampled while a bulk stream runs (ms). */
const PROBE_MS = 10;
/** A late probe holds the streams this long (ms); every late probe extends it. */
const HOLD_MS = 100;
/** Another request within this long (ms) means the process is answering more than pulls. */
const INTERACTIVE_WINDOW_MS = 1_000;
/**
 * The longest the streams are held at a stretch (ms), then they flow for FLOW_MS whatever the
 * loop: on a machine that stays busy a pull goes at a tenth of its pace or more, never stops.
 */
const LONGEST_HOLD_MS = 1_000;
const FLOW_MS = 100;

export interface BulkYieldOptions {
  /** event-loop lateness (ms) that holds the streams; 0 never holds */
  lagMs: number;
}

export interface BulkYield {
  /** A request that is not a bulk stream arrived (the onRequest hook of src/plugins/bulk-yield.ts). */
  noteRequest(): void;
  /**
   * One stream's uncompressed bytes, held while the process yields (the stream itself when it
   * never does); destroying either end destroys both.
   */
  gated(body: Readable): Readable;
  /** Milliseconds the streams were held so far (for the metrics); a hold counts once, however many streams it held. */
  heldMs(): number;
  /** Whether the streams are held now. */
  holding(): boolean;
  close(): void;
}

export function createBulkYield({ lagMs }: BulkYieldOptions): BulkYield {
  let lastRequestAt = -Infinity;
  let heldUntil = 0;
  let holdStartedAt = 0;
  let flowUntil = 0;
  let heldTotalMs = 0;
  let probe: NodeJS.Timeout | null = null;
  let expectedAt = 0;
  const open = new Set<Transform>();
  // a held chunk's callback, per gate: called when the hold ends (or dropped with its stream)
  const waiting = new Map<Transform, () => void>();

  const holding = () => performance.now() < heldUntil;
  const releaseAll = () => {
    const callbacks = [...waiting.values()];
    waiting.clear();
    for (const callback of callbacks) callback();
  };

  function sample() {
    const now = performance.now();
    const late = now - expectedAt;
    expectedAt = now + PROBE_MS;
    if (holding() && now - holdStartedAt >= LONGEST_HOLD_MS) {
      // held long enough: the rest of the hold is given back, and the streams flow a while
      heldTotalMs -= heldUntil - now;
      heldUntil = now;
      flowUntil = now + FLOW_MS;
    }
    if (late > lagMs && now - lastRequestAt < INTERACTIVE_WINDOW_MS && now >= flowUntil) {
      if (!holding()) holdStartedAt = now;
      const from = Math.max(now, heldUntil);
      heldUntil = now + HOLD_MS;
      heldTotalMs += heldUntil - from;
    }
    if (!holding() && waiting.size > 0) releaseAll();
  }

  function startProbe() {
    if (probe || lagMs === 0) return;
    expectedAt = performance.now() + PROBE_MS;
    probe = setInterval(sample, PROBE_MS);
    probe.unref();
  }
  function stopProbe() {
    if (!probe || open.size > 0) return;
    clearInterval(probe);
    probe = null;
    // the rest of a hold nothing waits on is not counted
    heldTotalMs -= Math.max(0, heldUntil - performance.now());
    heldUntil = 0;
  }

  return {
    noteRequest() {
      lastRequestAt = performance.now();
    },
    gated(body) {
      if (lagMs === 0) return body;
      const gate: Transform = new Transform({
        // a COPY chunk at a time, as the stream before it (src/sensors/bulk.ts) buffers them
        highWaterMark: 256 * 1024,
        transform(chunk: Buffer, _encoding, callback) {
          if (!holding()) {
            callback(null, chunk);
            return;
          }
          waiting.set(gate, () => callback(null, chunk));
        },
      });
      open.add(gate);
      startProbe();
      gate.once('close', () => {
        open.delete(gate);
        waiting.delete(gate);
        stopProbe();
      });
      // the COPY's errors reach the gate's readers (the Parquet thread's feeder, the compressor)
      return pipeline(body, gate, () => {});
    },
    heldMs: () => heldTotalMs - Math.max(0, heldUntil - performance.now()),
    holding,
    close() {
      releaseAll();
      if (probe) clearInterval(probe);
      probe = null;
    },
  };
}
