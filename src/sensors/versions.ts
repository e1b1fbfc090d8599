// What sensor history and the change feed are read at: the versions their ETags are made of
// (src/data-surface/conditional-requests.ts), each one small statement on the pool the pages are
// read from, read before the page. Readings enter only by ingest loads, each of which records its
// changes in the feed in the same transaction (013_sensor-changes.sql), and leave only by the
// store's retention (raw readings only), which records nothing: the feed tells every other change.
import type pg from 'pg';
import { loadQueries } from '../db/sql.js';
import { pgTimestamp } from '../http/dates.js';

const sql = loadQueries('sensor-changes', ['readingsVersion', 'feedVersion']);

/**
 * How long after a load of a unit its history has no version: TimescaleDB re-materializes the
 * buckets late readings landed in after the load commits (src/sensors/store.ts, waiting up to ~21 s
 * for a refresh in progress), and the counts that place pages are cached up to COUNTS_TTL_MS
 * (src/sensors/history.ts). Meanwhile the answer's own bytes are its validator.
 */
export const SETTLE_SECONDS = 60;

export interface ReadingsVersion {
  /** the last change of the units (or how far the feed was pruned): the same while their readings are */
  version: string;
  /** a change of the units landed less than SETTLE_SECONDS ago */
  settling: boolean;
  /** raw readings from the given instant on may be dropped by the store's retention */
  withinRetention: boolean;
  /** the change feed's head, any unit's */
  head: bigint;
}

export interface FeedVersion {
  head: bigint;
  prunedThrough: bigint;
}

export function createVersions(pool: Pick<pg.Pool, 'query'>) {
  return {
    /** The version of units' readings; `rawFromMs`: the first instant of a page of raw readings (else null). */
    async readings(unitIds: readonly number[], rawFromMs: number | null): Promise<ReadingsVersion> {
      const { rows } = await pool.query<{ version: string; settling: boolean; within_retention: boolean; head: string }>(
        sql.readingsVersion,
        [unitIds, SETTLE_SECONDS, rawFromMs === null ? null : pgTimestamp(rawFromMs)],
      );
      const row = rows[0]!;
      return { version: row.version, settling: row.settling, withinRetention: row.within_retention, head: BigInt(row.head) };
    },
    /** The change feed's head and how far it was pruned. */
    async feed(): Promise<FeedVersion> {
      const { rows } = await pool.query<{ head: string; pruned_through: string }>(sql.feedVersion);
      return { head: BigInt(rows[0]!.head), prunedThrough: BigInt(rows[0]!.pruned_through) };
    },
  };
}

export type Versions = ReturnType<typeof createVersions>;
