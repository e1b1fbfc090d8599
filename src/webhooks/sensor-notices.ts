// sensor_data.changed (docs/webhooks.md): an endpoint that wants it is told, at most once a minute,
// what landed for its units since its last notice (the units, how many readings, the span of time)
// with the change feed's cursors around exactly those changes: GET /api/v1/sensor-data/changes
// with since=since_cursor reads them, up to until_cursor. Every process may run it: an endpoint is
// locked while it is handled (SKIP LOCKED), and its notice and its new feed position are written
// in one transaction, so each change is told once.
import type pg from 'pg';
import { loadQueries } from '../db/sql.js';

const sql = loadQueries('webhooks', [
  'claimSensorNotices',
  'sensorChangesAfter',
  'markSensorNotice',
  'feedHead',
  'advanceSensorPosition',
  'insertEvent',
]);

/** Endpoints handled in one transaction. */
const ENDPOINTS_AT_ONCE = 50;

interface Claimed {
  id: string;
  company_id: number;
  cooling_unit_ids: number[] | null;
  sensor_position: string;
}

interface Changed {
  last_id: string;
  cooling_unit_ids: number[];
  readings: number;
  first_at: Date;
  last_at: Date;
}

/** A change-feed cursor of `companyId` at `position`, as the feed's own pages write it. */
export type CursorOf = (companyId: number, position: bigint) => Promise<string>;

/** Writes the notices due at `now`; how many. */
export async function writeSensorNotices(pool: pg.Pool, now: Date, cursorOf: CursorOf): Promise<number> {
  const client = await pool.connect();
  let written = 0;
  try {
    await client.query('BEGIN');
    const { rows: endpoints } = await client.query<Claimed>(sql.claimSensorNotices, [now, ENDPOINTS_AT_ONCE]);
    if (endpoints.length > 0) {
      const head = BigInt((await client.query<{ head: string }>(sql.feedHead)).rows[0]!.head);
      for (const endpoint of endpoints) {
        const position = BigInt(endpoint.sensor_position);
        const { rows } = await client.query<Changed>(sql.sensorChangesAfter, [endpoint.company_id, position, endpoint.cooling_unit_ids]);
        const changed = rows[0];
        if (!changed) {
          // nothing of its units landed up to the head read before: the next look starts there
          if (head > position) await client.query(sql.advanceSensorPosition, [endpoint.id, head]);
          continue;
        }
        const until = BigInt(changed.last_id);
        const data = {
          cooling_unit_ids: changed.cooling_unit_ids,
          readings: changed.readings,
          first_reading_at: changed.first_at.toISOString(),
          last_reading_at: changed.last_at.toISOString(),
          since_cursor: await cursorOf(endpoint.company_id, position),
          until_cursor: await cursorOf(endpoint.company_id, until),
        };
        await client.query(sql.insertEvent, [endpoint.company_id, 'sensor_data.changed', now, data, `sensor:${endpoint.id}`, endpoint.id]);
        await client.query(sql.markSensorNotice, [endpoint.id, until, now]);
        written++;
      }
    }
    await client.query('COMMIT');
    return written;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
