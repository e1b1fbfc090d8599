// Loads validated readings in batches, one transaction per batch, so a batch is never half
// loaded and re-running a file is harmless. Per batch:
//   1. readings of unknown cooling units, and of soft-deleted units from their deletion on, are
//      bad rows, reported with their line numbers (checked once per unit here rather than by a
//      foreign key, which costs a lookup and a trigger per reading); a deleted unit's readings
//      from before its deletion are its late history, loaded (docs/figures.md, "Deleted units");
//   2. fast path: a binary COPY (copy-binary.ts) straight into the store (the postgres profile's
//      weekly partitions, or the hypertable), aggregates maintained by the store itself;
//   3. if that meets a duplicate (unique violation), the batch is redone from a staging table
//      with ON CONFLICT DO NOTHING: a duplicate reading is dropped, never counted twice;
//   4. last in the transaction, the spans of history the batch added to are recorded for the
//      change feed (change-spans.ts, sql/migrations/013_sensor-changes.sql): one row per unit and
//      specification type, computed while the batch is prepared (the slow path: from the rows
//      that were new);
//   5. after commit, continuous aggregates re-materialize buckets that late readings landed in.
// Parsing and preparing the next batches overlaps loading: up to LOADS_IN_FLIGHT batches load
// at once, each on its own connection and in its own transaction. A failed batch stops the run;
// the batch loading beside it may still commit (whole, like every batch), so re-running the file
// finds it as duplicates.
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { loadQueries } from '../db/sql.js';
import { retryTransient } from '../db/transient.js';
import { changeSpans, type ChangeSpans, type ReadingInstant } from './change-spans.js';
import { COPY_COLUMNS, encodeReadings } from './copy-binary.js';
import type { BadRow, ParsedLine, Reading } from './formats.js';
import { refreshLateAggregates, storageProfile, type StorageProfile } from './store.js';

const sql = loadQueries('sensor-ingest', ['knownUnitIds', 'prepareRange', 'createStaging', 'insertStaged', 'recordChanges']);

export const DEFAULT_BATCH_SIZE = 50_000;
// two batches loading at once keep both of a small server's cores busy (one writes its batch
// while the other's aggregates are folded in); a third measured no faster on two cores
const LOADS_IN_FLIGHT = 2;
const BATCH_WORK_MEM = '64MB';
// a deadlock or serialization failure between the two loads in flight: the batch is tried again
const ATTEMPTS = 3;

export interface IngestOptions {
  batchSize?: number;
  /** skip: report a bad row and go on; abort: report it and stop before its batch is loaded */
  onError?: 'skip' | 'abort';
  /** copy (default); insert for servers or proxies in front of them that cannot COPY FROM STDIN */
  transport?: 'copy' | 'insert';
  /** batches loading at once over COPY, each on its own connection (default 2); INSERT: always 1 */
  loadsInFlight?: number;
  onBadRow?: (bad: BadRow) => void;
  /** once per soft-deleted unit the readings name (its readings from before `deletedAt` are loaded) */
  onDeletedUnit?: (unitId: number, deletedAt: Date) => void;
  /** after every committed batch, with the running totals */
  onBatch?: (stats: IngestStats) => void;
}

export interface IngestStats {
  /** data rows read (good and bad) */
  rows: number;
  inserted: number;
  duplicates: number;
  bad: number;
  batches: number;
  /** the line that stopped an aborted run */
  abortedAt: number | null;
}

export class IngestAborted extends Error {
  constructor(
    readonly bad: BadRow,
    readonly stats: IngestStats,
  ) {
    super(`line ${bad.line}: ${bad.reason} (aborted; batches before this one are loaded)`);
  }
}

export async function ingestReadings(pool: pg.Pool, runs: AsyncIterable<ParsedLine[]>, options: IngestOptions = {}): Promise<IngestStats> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const onError = options.onError ?? 'abort';
  const stats: IngestStats = { rows: 0, inserted: 0, duplicates: 0, bad: 0, batches: 0, abortedAt: null };
  const loader = new BatchLoader(pool, await storageProfile(pool), options.transport ?? 'copy');

  const reportBad = (bad: BadRow) => {
    stats.bad += 1;
    options.onBadRow?.(bad);
    if (onError === 'abort') {
      stats.abortedAt = bad.line;
      throw new IngestAborted(bad, stats);
    }
  };
  const prepare = async (batch: Reading[]) => {
    const refused = await loader.refusedReadings(batch, options.onDeletedUnit);
    for (const bad of refused.values()) reportBad(bad);
    if (refused.size > 0) batch = batch.filter((reading) => !refused.has(reading));
    return loader.prepare(batch);
  };
  const commit = async (prepared: PreparedBatch) => {
    const inserted = await loader.commit(prepared);
    stats.inserted += inserted;
    stats.duplicates += prepared.rows.length - inserted;
    stats.batches += 1;
    options.onBatch?.({ ...stats });
  };

  // Batches in flight: at most `loads` at once (always one on the INSERT transport: it is the
  // fallback for servers that cannot COPY, which are rarely the ones that can take two at once).
  // A load never rejects: its failure is kept and surfaces at the next send or at the end.
  const loads = (options.transport ?? 'copy') === 'copy' ? Math.max(1, options.loadsInFlight ?? LOADS_IN_FLIGHT) : 1;
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | null = null;
  const settle = async (most: number) => {
    while (inFlight.size > most) await Promise.race(inFlight);
    if (failure) throw failure.error;
  };
  const send = async (full: Reading[]) => {
    if (loads === 1) await settle(0);
    const prepared = await prepare(full);
    await settle(loads - 1);
    const load: Promise<void> = commit(prepared).then(
      () => {
        inFlight.delete(load);
      },
      (error: unknown) => {
        inFlight.delete(load);
        failure ??= { error };
      },
    );
    inFlight.add(load);
  };

  let batch: Reading[] = [];
  try {
    for await (const run of runs) {
      for (const parsed of run) {
        stats.rows += 1;
        if ('reason' in parsed) {
          reportBad(parsed);
          continue;
        }
        batch.push(parsed);
        if (batch.length >= batchSize) {
          await send(batch);
          batch = [];
        }
      }
      // Parsing can go on for many runs without a turn of the event loop (an input in memory
      // only resolves promises): without one here the socket would not take the rest of a batch
      // in flight until the next batch is parsed, and the database would wait on this side.
      if (inFlight.size > 0) await nextTurn();
    }
    if (batch.length > 0) await send(batch);
    await settle(0);
  } catch (error) {
    // batches already sent finish (or fail) before the run reports how it ended
    while (inFlight.size > 0) await Promise.race(inFlight);
    throw error;
  }
  return stats;
}

interface PreparedBatch {
  rows: Reading[];
  first: string;
  last: string;
  /** per target relation: the rows, and for COPY their binary encoding */
  parts: Part[];
  /** the spans the batch adds to history when every reading is new */
  spans: ChangeSpans;
}

interface Part {
  target: string;
  rows: Reading[];
  data: Buffer | null;
}

/** PostgreSQL's epoch in Unix microseconds: Reading.recordedAtUs and deletedAtUs count from it. */
const PG_EPOCH_US = 946_684_800_000_000;

class BatchLoader {
  /** The units seen so far: when each was soft-deleted (microseconds, as Reading.recordedAtUs), or null. */
  private readonly knownUnits = new Map<number, number | null>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly profile: StorageProfile,
    private readonly transport: 'copy' | 'insert',
  ) {}

  /**
   * The readings refused, in batch order, each with its bad row: its unit does not exist, or was
   * soft-deleted at or before its instant. Units seen once are remembered; each deleted one is
   * announced (onDeletedUnit) when first seen.
   */
  async refusedReadings(batch: Reading[], onDeletedUnit?: (unitId: number, deletedAt: Date) => void): Promise<Map<Reading, BadRow>> {
    const unseen = new Set<number>();
    for (const reading of batch) if (!this.knownUnits.has(reading.unitId)) unseen.add(reading.unitId);
    if (unseen.size > 0) {
      const { rows } = await this.pool.query<{ id: number; deletedAtUs: number | null }>(sql.knownUnitIds, [[...unseen]]);
      for (const row of rows) {
        this.knownUnits.set(row.id, row.deletedAtUs);
        if (row.deletedAtUs !== null) onDeletedUnit?.(row.id, deletedAtDate(row.deletedAtUs));
      }
    }
    const refused = new Map<Reading, BadRow>();
    for (const reading of batch) {
      const deletedAtUs = this.knownUnits.get(reading.unitId);
      if (deletedAtUs === undefined) {
        refused.set(reading, { line: reading.line, reason: `cooling unit ${reading.unitId} does not exist` });
      } else if (deletedAtUs !== null && reading.recordedAtUs >= deletedAtUs) {
        const at = deletedAtDate(deletedAtUs).toISOString();
        refused.set(reading, { line: reading.line, reason: `cooling unit ${reading.unitId} was deleted at ${at}, before this reading` });
      }
    }
    return refused;
  }

  /** Everything a batch needs before its transaction: partitions, routing, COPY data. */
  async prepare(rows: Reading[]): Promise<PreparedBatch> {
    if (rows.length === 0) return { rows, first: '', last: '', parts: [], spans: changeSpans([]) };
    let first = rows[0]!;
    let last = first;
    for (const reading of rows) {
      if (reading.recordedAtMs < first.recordedAtMs) first = reading;
      if (reading.recordedAtMs > last.recordedAtMs) last = reading;
    }
    // partitions are created in their own short transaction, never while a batch holds locks
    const { rows: targets } = await this.pool.query<{ target: string; start_ms: number; end_ms: number }>(sql.prepareRange, [
      first.recordedAt,
      last.recordedAt,
    ]);
    const parts = routeToTargets(rows, targets).map((part) => ({
      ...part,
      data: this.transport === 'copy' ? encodeReadings(part.rows) : null,
    }));
    return { rows, first: first.recordedAt, last: last.recordedAt, parts, spans: changeSpans(rows) };
  }

  /** Loads a prepared batch atomically; returns how many readings were new. */
  async commit(batch: PreparedBatch): Promise<number> {
    if (batch.rows.length === 0) return 0;
    const inserted = await retryTransient(() => this.loadOnce(batch), { attempts: ATTEMPTS });
    // after the commit, never inside the retry above (a committed batch must not load twice); one
    // refresh at a time from this ingest, as TimescaleDB refuses overlapping refreshes (55P03)
    if (this.profile === 'timescale') {
      const refresh = this.refreshes.then(() => refreshLateAggregates(this.pool, batch.first, batch.last));
      this.refreshes = refresh.catch(() => {});
      await refresh;
    }
    return inserted;
  }

  /** The late-aggregate refreshes of this ingest, one after the other. */
  private refreshes: Promise<unknown> = Promise.resolve();

  private async loadOnce(batch: PreparedBatch): Promise<number> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      // the aggregate trigger's transition table fills under the session's work_mem while the
      // batch is written: room for a whole batch, so it is not spilled to a temporary file
      await client.query(`SET LOCAL work_mem = '${BATCH_WORK_MEM}'`);
      await client.query('SAVEPOINT direct');
      let inserted: number;
      let spans = batch.spans;
      try {
        for (const part of batch.parts) await this.write(client, client.escapeIdentifier(part.target), part);
        inserted = batch.rows.length;
      } catch (error) {
        if ((error as { code?: string }).code !== '23505') throw error;
        await client.query('ROLLBACK TO SAVEPOINT direct');
        await client.query(sql.createStaging);
        for (const part of batch.parts) await this.write(client, 'sensor_ingest_staging', part);
        const { rows: added } = await client.query<ReadingInstant>(sql.insertStaged);
        inserted = added.length;
        spans = changeSpans(added);
      }
      // last: it holds the feed's ordering lock until the commit (013_sensor-changes.sql)
      if (spans.units.length > 0) {
        await client.query(sql.recordChanges, [spans.units, spans.types, spans.firsts, spans.lasts, spans.counts]);
      }
      await client.query('COMMIT');
      return inserted;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  private async write(client: pg.PoolClient, table: string, part: Part): Promise<void> {
    if (part.data === null) {
      const { rows } = part;
      await client.query(
        `INSERT INTO ${table} ${COPY_COLUMNS}
         SELECT * FROM unnest($1::int[], $2::specification_type[], $3::timestamptz[], $4::float8[])`,
        [rows.map((r) => r.unitId), rows.map((r) => r.type), rows.map((r) => r.recordedAt), rows.map((r) => r.value)],
      );
      return;
    }
    // the whole part in one write: the socket drains it while this thread parses on
    const stream = client.query(copyFrom(`COPY ${table} ${COPY_COLUMNS} FROM STDIN WITH (FORMAT binary)`));
    await pipeline(Readable.from([part.data]), stream);
  }
}

/** Splits a batch by the target relation each reading's instant falls in. */
function routeToTargets(batch: Reading[], targets: { target: string; start_ms: number; end_ms: number }[]): Omit<Part, 'data'>[] {
  if (targets.length === 1) return [{ target: targets[0]!.target, rows: batch }];
  const groups = targets.map((target) => ({ target: target.target, rows: [] as Reading[] }));
  for (const reading of batch) {
    const index = targets.findIndex((t) => reading.recordedAtMs >= t.start_ms && reading.recordedAtMs < t.end_ms);
    if (index < 0) throw new Error(`no partition holds ${reading.recordedAt}`);
    groups[index]!.rows.push(reading);
  }
  return groups.filter((group) => group.rows.length > 0);
}

/** A deletion instant of knownUnitIds as a Date (to the millisecond, for messages). */
const deletedAtDate = (deletedAtUs: number) => new Date(Math.floor((deletedAtUs + PG_EPOCH_US) / 1000));
