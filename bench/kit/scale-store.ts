// One size of the P9 scale curve in its database (bench/scale-profile.ts; bench/sensor-changes.ts
// builds its fleet the same way): the fleet loaded, the timescale policies as at END, its layout and bytes.
import { existsSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import type pg from 'pg';
import { readingChunks } from '../../src/sensors/generate.js';
import { ingestReadings } from '../../src/sensors/ingest.js';
import { type Bytes, DAYS, END, READINGS_PER_UNIT } from './scale-plan.js';
import { aggregateLayout, type BenchDatabase, csvReadingRuns, untimedClient } from './sensor-script.js';

/** The fleet's two years through the real ingest (CSV parsed and validated, COPY in batches of 100,000), in time order. */
export async function loadFleet(pool: pg.Pool, units: number, progress: (line: string) => void) {
  const total = units * READINGS_PER_UNIT;
  const started = performance.now();
  let lastProgress = started;
  const stats = await ingestReadings(pool, csvReadingRuns(readingChunks({ units, days: DAYS, end: END, seed: 1 }), END), {
    batchSize: 100_000,
    onBatch: ({ inserted }) => {
      const now = performance.now();
      if (now - lastProgress < 15_000) return;
      lastProgress = now;
      progress(
        `loading: ${(inserted / 1e6).toFixed(1)} M of ${(total / 1e6).toFixed(1)} M readings, ${Math.round(inserted / (now - started))}k/s`,
      );
    },
  });
  if (stats.inserted !== total) throw new Error(`the ingest loaded ${stats.inserted} of ${total} readings`);
  const seconds = (performance.now() - started) / 1000;
  return { seconds, perSecond: total / seconds };
}

/**
 * timescale: moves the policies' offsets (refresh end_offset, compress_after) back by now() - `at`,
 * so CALL run_job does what the policy would have done at `at` (the newest week stays row store).
 */
export async function policiesAsOf(db: BenchDatabase, at: Date): Promise<string[]> {
  const { rows } = await db.pool.query<{ job: string }>(
    `
    WITH chosen AS MATERIALIZED (
      SELECT j.job_id, j.proc_name, j.hypertable_name, j.config, k.key,
             ((j.config->>k.key)::interval + (now() - $1::timestamptz))::text AS shifted
      FROM timescaledb_information.jobs j CROSS JOIN LATERAL jsonb_object_keys(j.config) AS k(key)
      WHERE j.hypertable_name IN ('sensor_readings', 'sensor_readings_hourly', 'sensor_readings_daily')
        AND k.key IN ('end_offset', 'compress_after'))
    SELECT format('%s on %s: %s %s', proc_name, hypertable_name, key, shifted) AS job,
           alter_job(job_id, config => config || jsonb_build_object(key, shifted)) IS NOT NULL AS altered
    FROM chosen ORDER BY job_id`,
    [at.toISOString()],
  );
  return rows.map((row) => row.job);
}

export async function bytesOnDisk(db: BenchDatabase): Promise<Bytes> {
  const sql =
    db.profile === 'timescale'
      ? `SELECT hypertable_size('sensor_readings')::float8 AS readings,
              (SELECT coalesce(sum(hypertable_size(format('%I.%I', materialization_hypertable_schema, materialization_hypertable_name)::regclass)), 0)
               FROM timescaledb_information.continuous_aggregates
               WHERE view_name IN ('sensor_readings_hourly', 'sensor_readings_daily'))::float8 AS aggregates,
              pg_database_size(current_database())::float8 AS database`
      : `SELECT (SELECT coalesce(sum(pg_total_relation_size(inhrelid)), 0) FROM pg_inherits
               WHERE inhparent = 'sensor_readings'::regclass)::float8 AS readings,
              (pg_total_relation_size('sensor_rollup_hourly') + pg_total_relation_size('sensor_rollup_daily'))::float8 AS aggregates,
              pg_database_size(current_database())::float8 AS database`;
  const { rows } = await db.pool.query<Bytes>(sql);
  return rows[0]!;
}

/** Partitions or chunks, and what the upkeep left compacted or compressed, in a line. */
export async function storeLayout(db: BenchDatabase): Promise<string> {
  if (db.profile === 'timescale') {
    const { rows } = await db.pool.query<{ chunks: number; compressed: number }>(`
      SELECT count(*)::int AS chunks, (count(*) FILTER (WHERE is_compressed))::int AS compressed
      FROM timescaledb_information.chunks WHERE hypertable_name = 'sensor_readings'`);
    return `sensor_readings: ${rows[0]!.chunks} chunks (${rows[0]!.compressed} compressed); ${await aggregateLayout(db.pool)}`;
  }
  const { rows } = await db.pool.query<{ partitions: number; months: number; compacted: number }>(`
    SELECT (SELECT count(*) FROM pg_inherits WHERE inhparent = 'sensor_readings'::regclass)::int AS partitions,
           (SELECT count(DISTINCT date_trunc('month', bucket, 'UTC')) FROM sensor_rollup_daily)::int AS months,
           (SELECT count(*) FROM sensor_rollup_compacted)::int AS compacted`);
  return `sensor_readings: ${rows[0]!.partitions} partitions (the default one included); rollups: ${rows[0]!.compacted} of ${rows[0]!.months} months compacted`;
}

/**
 * Every 5 s, on a connection of its own: the size of `db` and the databases beside it together, and
 * the used space of the file system under the server's data directory when it is on this machine.
 * stop() gives the highest size and the file system's largest growth.
 */
export async function sampleDisk(db: BenchDatabase, besides: BenchDatabase[]) {
  const client = await untimedClient(db);
  const names = [db, ...besides].map((database) => decodeURIComponent(new URL(database.url).pathname.slice(1)));
  const directory = await client.query<{ data_directory: string }>('SHOW data_directory').then(
    ({ rows }) => rows[0]?.data_directory,
    () => undefined,
  );
  const used = async () => {
    if (!directory || !existsSync(directory)) return null;
    const fs = await statfs(directory);
    return (fs.blocks - fs.bfree) * fs.bsize;
  };
  const usedAtStart = await used();
  let latest = 0;
  let peakDatabase = 0;
  let peakUsed = usedAtStart ?? 0;
  // one sample at a time: a slow one (the server busy compressing) is not queued behind
  let current: Promise<void> | null = null;
  const sample = () =>
    (current ??= (async () => {
      const { rows } = await client.query<{ size: number }>(
        'SELECT sum(pg_database_size(datname))::float8 AS size FROM pg_database WHERE datname = ANY($1)',
        [names],
      );
      latest = rows[0]!.size;
      peakDatabase = Math.max(peakDatabase, latest);
      peakUsed = Math.max(peakUsed, (await used()) ?? 0);
    })()
      .catch(() => {})
      .finally(() => (current = null)));
  await sample();
  const timer = setInterval(() => void sample(), 5_000);
  const finish = async () => {
    clearInterval(timer);
    await current;
    await sample();
    await client.end().catch(() => {});
    return { peakDatabaseBytes: peakDatabase, peakFileSystemGrowthBytes: usedAtStart === null ? null : peakUsed - usedAtStart };
  };
  let stopped: ReturnType<typeof finish> | undefined;
  return { latest: () => latest, stop: () => (stopped ??= finish()) };
}
