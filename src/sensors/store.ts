// The sensor store's few operations that differ by storage profile (sql/migrations/003_sensor-store/):
// which profile a database has, refreshing continuous aggregates after late readings, and upkeep.
// The relations the API reads are the same in both profiles; only this module knows the difference.
import type pg from 'pg';

export type StorageProfile = 'timescale' | 'postgres';

type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

export async function storageProfile(db: Queryable): Promise<StorageProfile> {
  const { rows } = await db.query<{ profile: StorageProfile }>('SELECT profile FROM sensor_storage');
  const profile = rows[0]?.profile;
  if (profile !== 'timescale' && profile !== 'postgres') throw new Error('sensor_storage names no storage profile');
  return profile;
}

/**
 * After readings in [from, to] committed: re-materialize the buckets of each continuous
 * aggregate that were already materialized (late readings), so they count at once instead of at
 * the next policy run. Nothing to do for exact aggregate tables. Cannot run inside a transaction block.
 */
export async function refreshLateAggregates(db: Queryable, from: string, to: string): Promise<number> {
  const { rows } = await db.query<{ aggregate: string; window_start: string; window_end: string }>(
    `SELECT aggregate, window_start::text, window_end::text FROM sensor_stale_aggregates($1::timestamptz, $2::timestamptz)`,
    [from, to],
  );
  for (const row of rows) {
    if (row.window_start >= row.window_end) continue;
    await whileRefreshRuns(() =>
      db.query('CALL refresh_continuous_aggregate($1::regclass, $2::timestamptz, $3::timestamptz)', [
        row.aggregate,
        row.window_start,
        row.window_end,
      ]),
    );
  }
  return rows.length;
}

/** 55P03: TimescaleDB refuses a refresh that overlaps one in progress (a policy run, another ingest). */
const CONCURRENT_REFRESH = '55P03';

/** Runs a refresh, waiting for an overlapping one to finish: up to ~30 s, backing off to 2 s. */
async function whileRefreshRuns(refresh: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await refresh();
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== CONCURRENT_REFRESH || attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(100 * attempt, 2000)));
    }
  }
}

/**
 * What the timescale refresh policies do on a schedule, now: materialize both aggregates up to
 * `until` (whole buckets). For tests (their template pauses the policies, so nothing runs at a
 * moment no test chose) and tools; the postgres profile's aggregate tables are always materialized.
 */
export async function materializeAggregates(db: Queryable, profile: StorageProfile, until: Date): Promise<void> {
  if (profile !== 'timescale') return;
  await db.query(`CALL refresh_continuous_aggregate('sensor_readings_hourly', NULL, date_trunc('hour', $1::timestamptz, 'UTC'))`, [
    until.toISOString(),
  ]);
  await db.query(`CALL refresh_continuous_aggregate('sensor_readings_daily', NULL, date_trunc('day', $1::timestamptz, 'UTC'))`, [
    until.toISOString(),
  ]);
}

/** Partitions ahead (and retention) for the postgres profile; a no-op for timescale. Quick. */
export async function maintainStore(db: Queryable, at: Date): Promise<number> {
  const { rows } = await db.query<{ dropped: number }>('SELECT sensor_maintain($1::timestamptz) AS dropped', [at.toISOString()]);
  return rows[0]?.dropped ?? 0;
}

/**
 * Compacts up to `most` closed months of the postgres profile's aggregate tables (one unit's history then
 * reads from a few pages); a no-op for timescale. Seconds per month on a large store: run it in
 * the background. Returns how many months it compacted.
 */
export async function compactAggregates(db: Queryable, at: Date, most = 3): Promise<number> {
  const { rows } = await db.query<{ compacted: number }>('SELECT sensor_compact($1::timestamptz, $2) AS compacted', [
    at.toISOString(),
    most,
  ]);
  return rows[0]?.compacted ?? 0;
}
