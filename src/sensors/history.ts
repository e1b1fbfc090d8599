// Pages of sensor history (raw readings, hourly or daily aggregates) in the order
// (timestamp, cooling_unit_id, specification_type), where page 500 costs what page 1 costs.
//
// - Two ways to say where a page starts. A cursor (history-cursor.ts) carries the key of the
//   last record a walk returned: the page starts strictly after it, so a walk continued by cursor
//   returns every record stored before it began exactly once, on any process or instance, however
//   other clients page (no state is kept here between requests). A page number is an offset into
//   the history as counted now: while readings land before it, a record can come twice or be
//   skipped at page boundaries (docs/partners.md says so).
// - has_next: one record more than the page is read; it is true exactly when such a record exists.
// - total_count: the daily aggregate's per-day counts for the window (readings = sum of
//   sample_count, hourly records = sum of hour_count, daily records = rows), exact because the
//   aggregates are, and a few thousand rows at most instead of millions of readings. Cached for
//   COUNTS_TTL_MS per (units, types, window), so paging does not even repeat that; a page that
//   finds where the records end says the exact total itself.
// - Placing a page without OFFSET over millions of rows: the cumulative day counts give the day
//   that holds row (page - 1) x page_size (or, after a cursor, where the page's last row falls);
//   for raw readings the hourly aggregate's counts of that day narrow it to the hour. The page is
//   then read from there, bounded in time by where its last row falls, so the database scans and
//   sorts about one page whatever its depth. If readings arrived since the counts were taken, a
//   page finds fewer rows than planned in its time range and reads on past it until full or the
//   window ends.
// - A page comes back as the JSON of the response's `data` array. Raw readings (the heaviest
//   pages: 1,000 records of five fields) are written by PostgreSQL (rawPageJson), not parsed into
//   objects here and serialized again; aggregates, whose means are rounded here, go through rows.
// - Replicas: every page statement also reads the change feed's head in its own snapshot. A page
//   of a walk read on a replica that has not yet replayed the walk's first page is read again on
//   the primary, and so is a page without a cursor read on a replica that has not replayed the
//   primary's head as the route read it when the request arrived (start.minHead): a lagging
//   replica never hides a record stored before the walk, nor one a `since=now` taken before it
//   points past. The first page starts at the window's start, not where the counts (which may
//   come from such a replica, or be cached) put the first record.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type pg from 'pg';
import { loadQueries } from '../db/sql.js';
import { registerStatement } from '../db/statements.js';
import { pgTimestamp } from '../http/dates.js';
import { serializeSensorRecords } from './serializer.js';
import { type Clock, DAY_MS, HOUR_MS } from '../time.js';
import type { SpecificationType } from './formats.js';
import type { RecordKey } from './history-cursor.js';
import { type Aggregation, type DayCounts, readDayCounts, totalOf } from './day-counts.js';

export { AGGREGATIONS, type Aggregation } from './day-counts.js';

const sql = loadQueries('sensor-data', ['hourCounts', 'rawReadings', 'rawPage', 'rawPageJson', 'hourlyPage', 'dailyPage']);

/** A page of raw readings, as rows or as JSON: both read the page's readings (rawReadings) as `page`. */
export const RAW_PAGE_SQL = {
  rows: registerStatement(`WITH page AS (${sql.rawReadings}) ${sql.rawPage}`),
  json: registerStatement(`WITH page AS (${sql.rawReadings}) ${sql.rawPageJson}`),
};

/** Where a walk continued by cursor stands (history-cursor.ts holds it between requests). */
export interface WalkStart {
  /** the last record returned: the page starts strictly after it */
  after: RecordKey;
  /** records the walk returned before this page */
  recordsBefore: number;
  page: number;
  /** the change feed's position the walk's first page saw */
  minHead: bigint;
}

export interface HistoryQuery {
  unitIds: readonly number[];
  types: SpecificationType[];
  /** [fromMs, toMs): whole UTC days */
  fromMs: number;
  toMs: number;
  aggregation: Aggregation;
  pageSize: number;
  /**
   * a page number, or the walk a cursor continues; minHead: the change feed's position the page
   * must see (a page without a cursor: the primary's when the request arrived)
   */
  start: { page: number; minHead?: bigint } | WalkStart;
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

/** Consecutive records as JSON: the members of an array, comma-separated, without brackets. */
interface Chunk {
  json: string;
  count: number;
  /** the change feed's head in the statement's snapshot (null: no row told it) */
  head: bigint | null;
}

export interface HistoryPage {
  /** the records, as the JSON of the response's data array */
  dataJson: string;
  records: number;
  totalCount: number;
  page: number;
  /** whether a record follows the page's last one in the window */
  hasNext: boolean;
  /** where the page after this one starts (null when none follows) */
  next: Omit<WalkStart, 'page'> | null;
  /** the change feed's head in the oldest snapshot a page statement read (null: none did) */
  head: bigint | null;
}

interface RawJsonRow {
  records: number;
  unusual_values: number;
  body: string;
  head: string;
}

const RECORD_START = '{"timestamp":';

/** The key of the last record of records written as JSON (comma-joined, as rawPageJson writes them). */
function lastKeyOf(json: string): RecordKey | null {
  const start = json.lastIndexOf(RECORD_START);
  if (start < 0) return null;
  const last = JSON.parse(json.slice(start)) as SensorRecord;
  return { timestamp: last.timestamp, unitId: last.cooling_unit_id, type: last.specification_type };
}

/** The records written as JSON without their last one. */
function withoutLast(json: string): string {
  const cut = json.lastIndexOf(`,${RECORD_START}`);
  return cut < 0 ? '' : json.slice(0, cut);
}

export const COUNTS_TTL_MS = 15_000;
const PAGE_SQL: Record<Aggregation, string> = { raw: RAW_PAGE_SQL.rows, hourly: sql.hourlyPage, daily: sql.dailyPage };

type Reader = Pick<pg.Pool, 'query'>;

export interface SensorHistoryOptions {
  /** the primary, when `pool` may be a replica: pages of a walk it has not caught up with are read there */
  primary?: Reader | null;
}

export function createSensorHistory(pool: Reader, clock: Clock, options: SensorHistoryOptions = {}) {
  // the injected clock drives expiry, so tests move time instead of sleeping
  const perf = { now: () => clock.now().getTime() };
  const dayCounts = new LRUCache<string, DayCounts>({ max: 2_000, ttl: COUNTS_TTL_MS, perf });
  const hourCounts = new LRUCache<string, Map<number, number>>({ max: 5_000, ttl: COUNTS_TTL_MS, perf });
  const primary = options.primary ?? null;

  const scope = (q: HistoryQuery) => [q.unitIds, q.types, pgTimestamp(q.fromMs), pgTimestamp(q.toMs)];

  async function countsOf(q: HistoryQuery, signature: string, fresh = false): Promise<DayCounts> {
    const cached = fresh ? undefined : dayCounts.get(signature);
    if (cached) return cached;
    const counts = await readDayCounts(pool, q);
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
   * Where row `offset` (0-based) of the history is, by the counts: the start of its day (or, for
   * raw readings, of its hour) and how many rows of that day or hour come before it. Past the
   * counted rows: the last counted day.
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

  async function fetchRange(
    reader: Reader,
    q: HistoryQuery,
    range: { from: number; to: number },
    seek: RecordKey | null,
    skip: number,
    limit: number,
  ): Promise<Chunk> {
    const params = [
      ...scope({ ...q, fromMs: range.from, toMs: range.to }),
      seek?.timestamp ?? null,
      seek?.unitId ?? null,
      seek?.type ?? null,
      skip,
      limit,
    ];
    if (q.aggregation === 'raw') {
      const {
        rows: [row],
      } = await reader.query<RawJsonRow>(RAW_PAGE_SQL.json, params);
      // a value JSON.stringify would write otherwise (1e-5, 1e+21): this page goes through rows
      if (row && row.unusual_values === 0) return { json: row.body, count: row.records, head: BigInt(row.head) };
    }
    const { rows } = await reader.query<SensorRecord & { head?: string }>(PAGE_SQL[q.aggregation], params);
    if (q.aggregation !== 'raw') for (const row of rows) row.value = withoutFloatNoise(row.value);
    return {
      json: serializeSensorRecords(rows).slice(1, -1),
      count: rows.length,
      head: rows[0]?.head === undefined ? null : BigInt(rows[0].head),
    };
  }

  return {
    async page(q: HistoryQuery): Promise<HistoryPage> {
      const walk = 'after' in q.start ? q.start : null;
      const page = q.start.page;
      const empty = (totalCount: number): HistoryPage => ({
        dataJson: '[]',
        records: 0,
        totalCount,
        page,
        hasNext: false,
        next: null,
        head: null,
      });
      if (q.unitIds.length === 0 || q.types.length === 0) return empty(0);
      const signature = createHash('sha1')
        .update(JSON.stringify(scope(q)))
        .digest('base64url');
      let counts = await countsOf(q, signature);
      const offset = walk ? walk.recordsBefore : (page - 1) * q.pageSize;
      // a page number past counts up to COUNTS_TTL_MS old: counted again before it is called empty
      if (!walk && offset > 0 && offset >= totalOf(counts, q.aggregation)) counts = await countsOf(q, signature, true);
      const counted = totalOf(counts, q.aggregation);
      // the first page is read whatever the counts say (they may predate readings it must return)
      if (!walk && offset > 0 && offset >= counted) return empty(counted);

      // one record more than the page: whether another page follows
      const wanted = q.pageSize + 1;
      const first = walk || offset === 0 ? null : await locate(q, signature, counts, offset);
      const lastEnd = counted === 0 ? q.toMs : (await locate(q, signature, counts, Math.min(offset + wanted - 1, counted - 1))).end;
      // the first page from the window's start: readings the counts do not know yet may lie before their first day
      let from = walk ? Date.parse(walk.after.timestamp) : offset === 0 ? q.fromMs : first!.start;
      let to = Math.min(q.toMs, Math.max(lastEnd, from + (q.aggregation === 'raw' ? HOUR_MS : DAY_MS)));

      // a walk's page must see at least what its first page saw, a first page what the primary had
      // when it was asked for: a replica behind that is passed over
      const minHead = q.start.minHead ?? 0n;
      let reader = pool;
      const read = async (range: { from: number; to: number }, seek: RecordKey | null, skip: number, limit: number) => {
        const chunk = await fetchRange(reader, q, range, seek, skip, limit);
        const behind = chunk.head === null ? minHead > 0n : chunk.head < minHead;
        if (!primary || reader === primary || !behind) return chunk;
        reader = primary;
        return fetchRange(reader, q, range, seek, skip, limit);
      };
      const chunks = [await read({ from, to }, walk?.after ?? null, first?.skip ?? 0, wanted)];
      let records = chunks[0]!.count;
      // fewer rows than the counts promised (readings arrived meanwhile): read on, widening
      while (records < wanted && to < q.toMs) {
        const span = Math.max(to - from, DAY_MS);
        from = to;
        to = Math.min(q.toMs, to + 2 * span);
        const chunk = await read({ from, to }, null, 0, wanted - records);
        chunks.push(chunk);
        records += chunk.count;
      }

      const hasNext = records > q.pageSize;
      if (hasNext) {
        const holder = chunks.findLast((chunk) => chunk.count > 0)!;
        holder.json = withoutLast(holder.json);
        holder.count--;
        records--;
      }
      const filled = chunks.filter((chunk) => chunk.count > 0);
      const dataJson = `[${filled.map((chunk) => chunk.json).join(',')}]`;
      const heads = chunks.flatMap((chunk) => (chunk.head === null ? [] : [chunk.head]));
      const oldest = heads.length > 0 ? heads.reduce((a, b) => (a < b ? a : b)) : null;
      const seen = oldest ?? minHead;
      const lastKey = filled.length > 0 ? lastKeyOf(filled.at(-1)!.json) : null;
      return {
        dataJson,
        records,
        // where the records were found to end, that is the total; a record beyond the counted ones raises it
        totalCount: hasNext ? Math.max(counted, offset + records + 1) : records > 0 || walk || offset === 0 ? offset + records : counted,
        page,
        hasNext,
        next: hasNext && lastKey ? { after: lastKey, recordsBefore: offset + records, minHead: walk ? minHead : seen } : null,
        head: oldest,
      };
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
