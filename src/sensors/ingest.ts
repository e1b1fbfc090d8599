// Loads validated readings in batches, one transaction per batch, so a batch is never half
// loaded and re-running a file is harmless. Per batch:
//   1. unknown cooling units are bad rows, reported with their line numbers (checked once per
//      unit here rather than by a foreign key, which costs a lookup and a trigger per reading);
//   2. fast path: COPY straight into the store (the postgres profile's weekly partitions, or the
//      hypertable), aggregates maintained by the store itself;
//   3. if that meets a duplicate (unique violation), the batch is redone from a staging table
//      with ON CONFLICT DO NOTHING: a duplicate reading is dropped, never counted twice;
//   4. after commit, continuous aggregates re-materialize buckets that late readings landed in.
// Parsing and preparing the next batch overlaps loading the current one (one batch in flight).
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { loadQueries } from '../db/sql.js';
import type { BadRow, ParsedLine, Reading } from './formats.js';
import { refreshLateAggregates, storageProfile, type StorageProfile } from './store.js';

const sql = loadQueries('sensor-ingest', ['knownUnitIds', 'prepareRange', 'createStaging', 'insertStaged']);

export const DEFAULT_BATCH_SIZE = 50_000;
const COLUMNS = '(cooling_unit_id, specification_type, recorded_at, value)';
const TRANSIENT = new Set(['40P01', '40001']); // deadlock, serialization failure: retry the batch
const ATTEMPTS = 3;

export interface IngestOptions {
  batchSize?: number;
  /** skip: report a bad row and go on; abort: report it and stop before its batch is loaded */
  onError?: 'skip' | 'abort';
  /** copy (default); insert for servers whose wire protocol cannot COPY FROM STDIN (PGlite) */
  transport?: 'copy' | 'insert';
  onBadRow?: (bad: BadRow) => void;
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
  constructor(readonly bad: BadRow, readonly stats: IngestStats) {
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
    const unknown = await loader.unknownUnits(batch);
    for (const reading of unknown) reportBad({ line: reading.line, reason: `cooling unit ${reading.unitId} does not exist` });
    if (unknown.length > 0) {
      const dropped = new Set(unknown);
      batch = batch.filter((reading) => !dropped.has(reading));
    }
    return loader.prepare(batch);
  };
  const commit = async (prepared: PreparedBatch) => {
    const inserted = await loader.commit(prepared);
    stats.inserted += inserted;
    stats.duplicates += prepared.rows.length - inserted;
    stats.batches += 1;
    options.onBatch?.({ ...stats });
  };

  let batch: Reading[] = [];
  // the next batch is parsed and prepared (units checked, partitions made, COPY text built) while
  // the previous one loads, so the database never waits on this side between two batches
  const pending: { load: Promise<void> | null } = { load: null };
  // except on the INSERT transport, meant for PGlite: its socket server multiplexes every
  // connection onto one backend, and a query from another connection while a batch's
  // transaction is open stalls both (seen with pglite-socket 0.0.22)
  const overlap = (options.transport ?? 'copy') === 'copy';
  const send = async (full: Reading[]) => {
    if (!overlap) await pending.load;
    const prepared = await prepare(full);
    await pending.load;
    pending.load = commit(prepared);
    // a failed load surfaces at the next await; keep it from being reported as unhandled
    pending.load.catch(() => {});
  };
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
    }
    if (batch.length > 0) await send(batch);
    await pending.load;
  } catch (error) {
    // a batch already sent finishes (or fails) before the run reports how it ended
    await pending.load?.catch(() => {});
    throw error;
  }
  return stats;
}

interface PreparedBatch {
  rows: Reading[];
  first: string;
  last: string;
  /** per target relation: COPY text, or the rows for the INSERT transport */
  parts: { target: string; rows: Reading[]; text: string }[];
}

class BatchLoader {
  private readonly knownUnits = new Set<number>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly profile: StorageProfile,
    private readonly transport: 'copy' | 'insert',
  ) {}

  /** Readings whose unit does not exist; units seen once are remembered. */
  async unknownUnits(batch: Reading[]): Promise<Reading[]> {
    const unseen = new Set<number>();
    for (const reading of batch) if (!this.knownUnits.has(reading.unitId)) unseen.add(reading.unitId);
    if (unseen.size === 0) return [];
    const { rows } = await this.pool.query<{ id: number }>(sql.knownUnitIds, [[...unseen]]);
    for (const row of rows) this.knownUnits.add(row.id);
    return batch.filter((reading) => !this.knownUnits.has(reading.unitId));
  }

  /** Everything a batch needs before its transaction: partitions, routing, COPY text. */
  async prepare(rows: Reading[]): Promise<PreparedBatch> {
    if (rows.length === 0) return { rows, first: '', last: '', parts: [] };
    let first = rows[0]!;
    let last = first;
    for (const reading of rows) {
      if (reading.recordedAtMs < first.recordedAtMs) first = reading;
      if (reading.recordedAtMs > last.recordedAtMs) last = reading;
    }
    // partitions are created in their own short transaction, never while a batch holds locks
    const { rows: targets } = await this.pool.query<{ target: string; start_ms: number; end_ms: number }>(
      sql.prepareRange, [first.recordedAt, last.recordedAt]);
    const parts = routeToTargets(rows, targets).map((part) => ({
      ...part, text: this.transport === 'copy' ? copyText(part.rows) : '',
    }));
    return { rows, first: first.recordedAt, last: last.recordedAt, parts };
  }

  /** Loads a prepared batch atomically; returns how many readings were new. */
  async commit(batch: PreparedBatch): Promise<number> {
    if (batch.rows.length === 0) return 0;
    for (let attempt = 1; ; attempt++) {
      try {
        const inserted = await this.loadOnce(batch);
        if (this.profile === 'timescale') await refreshLateAggregates(this.pool, batch.first, batch.last);
        return inserted;
      } catch (error) {
        if (attempt >= ATTEMPTS || !TRANSIENT.has((error as { code?: string }).code ?? '')) throw error;
      }
    }
  }

  private async loadOnce(batch: PreparedBatch): Promise<number> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SAVEPOINT direct');
      let inserted: number;
      try {
        for (const part of batch.parts) await this.write(client, client.escapeIdentifier(part.target), part);
        inserted = batch.rows.length;
      } catch (error) {
        if ((error as { code?: string }).code !== '23505') throw error;
        await client.query('ROLLBACK TO SAVEPOINT direct');
        await client.query(sql.createStaging);
        for (const part of batch.parts) await this.write(client, 'sensor_ingest_staging', part);
        inserted = (await client.query(sql.insertStaged)).rowCount ?? 0;
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

  private async write(client: pg.PoolClient, table: string, part: { rows: Reading[]; text: string }): Promise<void> {
    if (this.transport === 'insert') {
      const { rows } = part;
      await client.query(
        `INSERT INTO ${table} ${COLUMNS}
         SELECT * FROM unnest($1::int[], $2::specification_type[], $3::timestamptz[], $4::float8[])`,
        [rows.map((r) => r.unitId), rows.map((r) => r.type), rows.map((r) => r.recordedAt), rows.map((r) => r.value)]);
      return;
    }
    // the whole part's text in one write: the socket drains it while this thread parses on
    const stream = client.query(copyFrom(`COPY ${table} ${COLUMNS} FROM STDIN`));
    await pipeline(Readable.from([part.text]), stream);
  }
}

/** The rows in COPY's text format. */
function copyText(rows: Reading[]): string {
  let text = '';
  for (const r of rows) text += `${r.unitId}\t${r.type}\t${r.recordedAt}\t${r.value}\n`;
  return text;
}

/** Splits a batch by the target relation each reading's instant falls in. */
function routeToTargets(batch: Reading[], targets: { target: string; start_ms: number; end_ms: number }[]) {
  if (targets.length === 1) return [{ target: targets[0]!.target, rows: batch }];
  const groups = targets.map((target) => ({ target: target.target, rows: [] as Reading[] }));
  for (const reading of batch) {
    const index = targets.findIndex((t) => reading.recordedAtMs >= t.start_ms && reading.recordedAtMs < t.end_ms);
    if (index < 0) throw new Error(`no partition holds ${reading.recordedAt}`);
    groups[index]!.rows.push(reading);
  }
  return groups.filter((group) => group.rows.length > 0);
}
