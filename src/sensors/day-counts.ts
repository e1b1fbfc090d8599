// Records per UTC day of a window of sensor history, for each kind of history, from the daily
// aggregate (sql/queries/sensor-data.sql, dayCounts): exact, since the aggregates count every
// reading once, and a few thousand rows at most instead of millions of readings. Pages are placed
// by them (history.ts) and bulk pulls sliced by them (bulk.ts).
import type pg from 'pg';
import { loadQueries } from '../db/sql.js';
import { pgTimestamp } from '../http/dates.js';
import type { SpecificationType } from './formats.js';

const sql = loadQueries('sensor-data', ['dayCounts']);

export const AGGREGATIONS = ['raw', 'hourly', 'daily'] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

export interface DayCounts {
  /** the days holding records, ms at 00:00 UTC, ascending */
  days: number[];
  /** per aggregation: records before each day (length days + 1; the last is the total) */
  before: Record<Aggregation, number[]>;
}

export interface CountedScope {
  unitIds: readonly number[];
  types: readonly SpecificationType[];
  /** [fromMs, toMs): whole UTC days */
  fromMs: number;
  toMs: number;
}

export async function readDayCounts(pool: Pick<pg.Pool, 'query'>, scope: CountedScope): Promise<DayCounts> {
  const { rows } = await pool.query<{ day_ms: number; raw: number; hourly: number; daily: number }>(sql.dayCounts, [
    scope.unitIds,
    scope.types,
    pgTimestamp(scope.fromMs),
    pgTimestamp(scope.toMs),
  ]);
  const counts: DayCounts = { days: rows.map((row) => row.day_ms), before: { raw: [0], hourly: [0], daily: [0] } };
  for (const row of rows) {
    for (const aggregation of AGGREGATIONS) {
      const before = counts.before[aggregation];
      before.push(before[before.length - 1]! + row[aggregation]);
    }
  }
  return counts;
}

export const totalOf = (counts: DayCounts, aggregation: Aggregation) => counts.before[aggregation][counts.days.length]!;
