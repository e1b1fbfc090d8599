// Pages of sensor history (raw readings, hourly or daily aggregates) in the order
// (timestamp, cooling_unit_id, specification_type), where page 500 costs what page 1 costs.
//
// - total_count: the daily aggregate's per-day counts for the window (readings = sum of
//   sample_count, hourly records = sum of hour_count, daily records = rows), exact because the
//   aggregates are, and a few thousand rows at most instead of millions of readings. Cached for
//   COUNTS_TTL_MS per (units, types, window), so paging does not even repeat that.
// - Placing a page without OFFSET over millions of rows: the cumulative day counts give the day
//   that holds row (page - 1) x page_size; for raw readings the hourly aggregate's counts of that
//   day narrow it to the hour. The page is then read from that hour (or day) on, with a small
//   OFFSET inside it, and bounded in time by where the page's last row falls, so the database
//   scans and sorts about one page whatever its number.
// - Page boundaries: after serving page k, the key of its last row is cached; page k + 1 then
//   seeks past that key instead of skipping. Reading page after page is therefore exactly
//   continuous (no row twice, none missed) even while readings arrive.
// If readings arrived since the counts were taken, a page may find fewer rows than planned in its
// time range; it then reads on past it until full or the window ends.
// - A page comes back as the JSON of the response's `data` array. Raw readings (the heaviest
//   pages: 1,000 records of five fields) are written by PostgreSQL (rawPageJson), not parsed into
//   objects here and serialized again; aggregates, whose means are rounded here, go through rows.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type pg from 'pg';
import { loadQueries } from '../db/sql.js';
import { registerStatement } from '../db/statements.js';
import { pgTimestamp } from '../http/dates.js';
import { serializeSensorRecords } from './serializer.js';
import { type Clock, DAY_MS, HOUR_MS } from '../time.js';
import type { SpecificationType } from './formats.js';

const sql = loadQueries('sensor-data', ['dayCounts', 'hourCounts', 'rawReadings', 'rawPage', 'rawPageJson', 'hourlyPage', 'dailyPage']);

/** A page of raw readings, as rows or as JSON: both read the page's readings (rawReadings) as `page`. */
export const RAW_PAGE_SQL = {
  rows: registerStatement(`WITH page AS (${sql.rawReadings}) ${sql.rawPage}`),
  json: registerStatement(`WITH page AS (${sql.rawReadings}) ${sql.rawPageJson}`),
};

export const AGGREGATIONS = ['raw', 'hourly', 'daily'] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

export interface HistoryQuery {
  unitIds: readonly number[];
  types: SpecificationType[];
  /** [fromMs, toMs): whole UTC days */
  fromMs: number;
  toMs: number;
  aggregation: Aggregation;
  page: number;
  pageSize: number;
}

export interface SensorRecord {
  timestamp: string;
  cooling_unit_id: number;
  specification_type: SpecificationType;
  value: number;
  sample_count: number;
  min?: number;
  max?: number;
}

interface Key {
  timestamp: string;
  unitId: number;
  type: string;
}

/** Consecutive records as JSON: the members of an array, comma-separated, without brackets. */
interface Chunk {
  json: string;
  count: number;
  last: Key | null;
}

export interface HistoryPage {
  /** the records, as the JSON of the response's data array */
  dataJson: string;
  records: number;
  totalCount: number;
}

interface RawJsonRow {
  records: number;
  unusual_values: number;
  body: string;
}

/** The key of the last record of records written as JSON (comma-joined, as rawPageJson writes them). */
function lastKeyOf(json: string): Key | null {
  const start = json.lastIndexOf('{"timestamp":');
  if (start < 0) return null;
  const last = JSON.parse(json.slice(start)) as SensorRecord;
  return { timestamp: last.timestamp, unitId: last.cooling_unit_id, type: last.specification_type };
}

interface DayCounts {
  days: number[];
  /** per aggregation: records before each day (length days + 1; the last is the total) */
  before: Record<Aggregation, number[]>;
}

export const COUNTS_TTL_MS = 15_000;
const BOUNDARY_TTL_MS = 15 * 60_000;
const PAGE_SQL: Record<Aggregation, string> = { raw: RAW_PAGE_SQL.rows, hourly: sql.hourlyPage, daily: sql.dailyPage };

export function createSensorHistory(pool: Pick<pg.Pool, 'query'>, clock: Clock) {
  // the injected clock drives expiry, so tests move time instead of sleeping
  const perf = { now: () => clock.now().getTime() };
  const dayCounts = new LRUCache<string, DayCounts>({ max: 2_000, ttl: COUNTS_TTL_MS, perf });
  const hourCounts = new LRUCache<string, Map<number, number>>({ max: 5_000, ttl: COUNTS_TTL_MS, perf });
  const boundaries = new LRUCache<string, Key>({ max: 50_000, ttl: BOUNDARY_TTL_MS, perf });

  const scope = (q: HistoryQuery) => [q.unitIds, q.types, pgTimestamp(q.fromMs), pgTimestamp(q.toMs)];

  async function countsOf(q: HistoryQuery, signature: string): Promise<DayCounts> {
    const cached = dayCounts.get(signature);
    if (cached) return cached;
    const { rows } = await pool.query<{ day_ms: number; raw: number; hourly: number; daily: number }>(sql.dayCounts, scope(q));
    const counts: DayCounts = { days: rows.map((row) => row.day_ms), before: { raw: [0], hourly: [0], daily: [0] } };
    for (const row of rows) {
      for (const aggregation of AGGREGATIONS) {
        const before = counts.before[aggregation];
        before.push(before[before.length - 1]! + row[aggregation]);
      }
    }
    dayCounts.set(signature, counts);
    return counts;
  }

  /** Readings per hour for the given days (ms), cached per day. */
  async function hoursOf(q: HistoryQuery, signature: string, firstDay: number, lastDay: number): Promise<Map<number, number>> {
    const hours = new Map<number, number>();
    let missingFrom: number | null = null;
    for (let day = firstDay; day <= lastDay; day += DAY_MS) {
      const cached = hourCounts.get(`${signature}|${day}`);
      if (cached) for (const [hour, count] of cached) hours.set(hour, count);
      else missingFrom ??= day;
    }
    if (missingFrom !== null) {
      const { rows } = await pool.query<{ hour_ms: number; raw: number }>(sql.hourCounts, [
        q.unitIds,
        q.types,
        pgTimestamp(missingFrom),
        pgTimestamp(lastDay + DAY_MS),
      ]);
      const byDay = new Map<number, Map<number, number>>();
      for (let day = missingFrom; day <= lastDay; day += DAY_MS) byDay.set(day, new Map());
      for (const row of rows) {
        byDay.get(row.hour_ms - (row.hour_ms % DAY_MS))?.set(row.hour_ms, row.raw);
        hours.set(row.hour_ms, row.raw);
      }
      for (const [day, counts] of byDay) hourCounts.set(`${signature}|${day}`, counts);
    }
    return hours;
  }

  /**
   * Where row `offset` (0-based) of the history is: the start of its day (or, for raw readings,
   * of its hour) and how many rows of that day or hour come before it.
   */
  async function locate(q: HistoryQuery, signature: string, counts: DayCounts, offset: number) {
    const before = counts.before[q.aggregation];
    const index = lastIndexAtMost(before, offset, counts.days.length - 1);
    const day = counts.days[index]!;
    const within = offset - before[index]!;
    if (q.aggregation !== 'raw') return { start: day, end: day + DAY_MS, skip: within };
    const hours = [...(await hoursOf(q, signature, day, day)).entries()].sort((a, b) => a[0] - b[0]);
    let seen = 0;
    for (const [hour, count] of hours) {
      if (within < seen + count) return { start: hour, end: hour + HOUR_MS, skip: within - seen };
      seen += count;
    }
    // the counts moved under us: start of the day, skipping what the day count said
    return { start: day, end: day + DAY_MS, skip: within };
  }

  async function fetchRange(q: HistoryQuery, from: number, to: number, seek: Key | null, skip: number, limit: number): Promise<Chunk> {
    const params = [
      ...scope({ ...q, fromMs: from, toMs: to }),
      seek?.timestamp ?? null,
      seek?.unitId ?? null,
      seek?.type ?? null,
      skip,
      limit,
    ];
    if (q.aggregation === 'raw') {
      const {
        rows: [row],
      } = await pool.query<RawJsonRow>(RAW_PAGE_SQL.json, params);
      // a value JSON.stringify would write otherwise (1e-5, 1e+21): this page goes through rows
      if (row && row.unusual_values === 0) return { json: row.body, count: row.records, last: lastKeyOf(row.body) };
    }
    const { rows } = await pool.query<SensorRecord>(PAGE_SQL[q.aggregation], params);
    if (q.aggregation !== 'raw') for (const row of rows) row.value = withoutFloatNoise(row.value);
    const tail = rows[rows.length - 1];
    return {
      json: serializeSensorRecords(rows).slice(1, -1),
      count: rows.length,
      last: tail ? { timestamp: tail.timestamp, unitId: tail.cooling_unit_id, type: tail.specification_type } : null,
    };
  }

  return {
    async page(q: HistoryQuery): Promise<HistoryPage> {
      if (q.unitIds.length === 0 || q.types.length === 0) return { dataJson: '[]', records: 0, totalCount: 0 };
      const signature = createHash('sha1')
        .update(JSON.stringify(scope(q)))
        .digest('base64url');
      const counts = await countsOf(q, signature);
      const totalCount = counts.before[q.aggregation][counts.days.length]!;
      const offset = (q.page - 1) * q.pageSize;
      if (offset >= totalCount) return { dataJson: '[]', records: 0, totalCount };
      const wanted = Math.min(q.pageSize, totalCount - offset);

      const boundaryKey = `${signature}|${q.aggregation}|${q.pageSize}|${q.page}`;
      const seek = boundaries.get(boundaryKey) ?? null;
      const first = seek ? null : await locate(q, signature, counts, offset);
      const last = await locate(q, signature, counts, offset + wanted - 1);
      let from = seek ? Date.parse(seek.timestamp) : first!.start;
      let to = Math.max(last.end, from + (q.aggregation === 'raw' ? HOUR_MS : DAY_MS));

      const chunks = [await fetchRange(q, from, Math.min(to, q.toMs), seek, first?.skip ?? 0, wanted)];
      let records = chunks[0]!.count;
      // fewer rows than the counts promised (readings arrived meanwhile): read on, widening
      while (records < wanted && to < q.toMs) {
        const span = Math.max(to - from, DAY_MS);
        from = to;
        to = Math.min(q.toMs, to + 2 * span);
        const chunk = await fetchRange(q, from, to, null, 0, wanted - records);
        chunks.push(chunk);
        records += chunk.count;
      }
      const lastKey = chunks.findLast((chunk) => chunk.last)?.last;
      if (records === q.pageSize && lastKey) boundaries.set(`${signature}|${q.aggregation}|${q.pageSize}|${q.page + 1}`, lastKey);
      const dataJson = `[${chunks
        .filter((chunk) => chunk.count > 0)
        .map((chunk) => chunk.json)
        .join(',')}]`;
      return { dataJson, records, totalCount };
    },
  };
}

export type SensorHistory = ReturnType<typeof createSensorHistory>;

/**
 * A mean to 12 significant digits: sum/count in float8 prints noise (92.27499999999999 for
 * 92.275). Readings carry a few decimals, so 12 digits keep every real digit of a mean (the error
 * is below 1e-10 relative); raw readings are never rounded.
 */
export function withoutFloatNoise(value: number): number {
  return Number(value.toPrecision(12));
}

/** The largest index i <= max with sorted[i] <= value (binary search). */
function lastIndexAtMost(sorted: number[], value: number, max: number): number {
  let low = 0;
  let high = max;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (sorted[middle]! <= value) low = middle;
    else high = middle - 1;
  }
  return low;
}
