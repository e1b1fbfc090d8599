// What every analytics endpoint shares: its query parameters, the echo of the filters in effect,
// and pagination over the (period bucket x cooling unit) grid of records.
import { z } from 'zod';
import { idQuery, paginationFor, paginationQuery } from '../http/schemas.js';
import { type ReportingScope, type ReportingUnit, reportsOn } from './reporting-units.js';
import { type Bucket, type Period, type Window, bucketsOf, dateParam, formatDay, periodParam } from '../data-surface/window.js';

export const analyticsQuery = {
  start_date: dateParam.optional().describe('YYYY-MM-DD, inclusive (UTC), from 0001-01-01; default end_date - 29 days'),
  end_date: dateParam
    .optional()
    .describe(
      'YYYY-MM-DD, inclusive (UTC), up to 9999-12-31; default today; must not be before start_date; the window (start_date..end_date) is at most 366 days',
    ),
  period: periodParam.default('day').describe('Bucket size; weeks start on Monday'),
  ...paginationQuery,
  cooling_unit_id: idQuery().optional().describe('Only this unit (404 when the token may not read it)'),
  location_id: idQuery().optional().describe('Only units at this location'),
};

export const analyticsFilters = z.object({
  start_date: z.string(),
  end_date: z.string(),
  period: periodParam,
  cooling_unit_id: z.number().int().nullable(),
  location_id: z.number().int().nullable(),
});

export function filtersOf(
  query: { period: Period; cooling_unit_id?: number | undefined; location_id?: number | undefined },
  window: Window,
) {
  return {
    start_date: formatDay(window.start),
    end_date: formatDay(window.end),
    period: query.period,
    cooling_unit_id: query.cooling_unit_id ?? null,
    location_id: query.location_id ?? null,
  };
}

export interface GridCell {
  bucket: Bucket;
  unitId: number;
}

export interface GridPage {
  cells: GridCell[];
  /** the page's distinct buckets and units, to query nothing beyond the page */
  buckets: Bucket[];
  unitIds: number[];
  /** the same units with their deletion instants (docs/figures.md, "Deleted units") */
  units: ReportingUnit[];
  pagination: ReturnType<typeof paginationFor>;
}

/** The units that report on a bucket, ascending id: the live ones and those deleted after it began. */
function unitsOf(scope: ReportingScope, bucket: Bucket): ReportingUnit[] {
  return scope.units.filter((unit) => reportsOn(unit, bucket.start));
}

function countReporting(units: readonly ReportingUnit[], bucket: Bucket): number {
  let count = 0;
  for (const unit of units) if (reportsOn(unit, bucket.start)) count++;
  return count;
}

/**
 * How many records each bucket has, and their total: a function of the (shared, cached) unit list
 * and bucket list alone, so worked out once per pair rather than on every request.
 */
const layouts = new WeakMap<readonly ReportingUnit[], WeakMap<readonly Bucket[], { sizes: readonly number[]; total: number }>>();
function gridLayout(units: readonly ReportingUnit[], buckets: readonly Bucket[]): { sizes: readonly number[]; total: number } {
  let byBuckets = layouts.get(units);
  if (!byBuckets) layouts.set(units, (byBuckets = new WeakMap()));
  let layout = byBuckets.get(buckets);
  if (!layout) {
    const retired = units.filter((unit) => unit.deletedAt !== null);
    const live = units.length - retired.length;
    const sizes = buckets.map((bucket) => live + countReporting(retired, bucket));
    byBuckets.set(buckets, (layout = { sizes, total: sizes.reduce((sum, size) => sum + size, 0) }));
  }
  return layout;
}

/**
 * Records are one per (bucket, unit that reports on it), ordered by period_start then
 * cooling_unit_id. The grid is known without touching data (a deleted unit reports on the buckets
 * that began before its deletion), so total_count is exact and free, and a page queries only its
 * own buckets and units: page 300 costs what page 1 costs.
 */
export function gridPage(window: Window, period: Period, scope: ReportingScope, page: number, pageSize: number): GridPage {
  const allBuckets = bucketsOf(window, period);
  const { sizes, total } = gridLayout(scope.units, allBuckets);
  const first = (page - 1) * pageSize;
  const end = Math.min(total, page * pageSize);
  const cells: GridCell[] = [];
  const pageUnits = new Map<number, ReportingUnit>();
  for (let b = 0, offset = 0; b < allBuckets.length && offset < end; offset += sizes[b]!, b++) {
    if (offset + sizes[b]! <= first) continue;
    const bucket = allBuckets[b]!;
    // every unit reports on most buckets (those that began before any deletion): no copy then
    const units = sizes[b] === scope.units.length ? scope.units : unitsOf(scope, bucket);
    for (let i = Math.max(0, first - offset); i < Math.min(units.length, end - offset); i++) {
      cells.push({ bucket, unitId: units[i]!.id });
      pageUnits.set(units[i]!.id, units[i]!);
    }
  }
  const buckets = [...new Set(cells.map((cell) => cell.bucket))];
  const units = [...pageUnits.values()];
  // in order already unless the page spans two buckets (a sort allocates ~900 bytes even for ten)
  if (units.some((unit, i) => i > 0 && unit.id < units[i - 1]!.id)) units.sort((a, b) => a.id - b.id);
  return { cells, buckets, unitIds: units.map((unit) => unit.id), units, pagination: paginationFor(page, pageSize, total) };
}

/** SQL parameters for a list of buckets: parallel arrays of start and inclusive end dates. */
export function bucketParams(buckets: readonly Bucket[]): [string[], string[]] {
  return [buckets.map((bucket) => formatDay(bucket.start)), buckets.map((bucket) => formatDay(bucket.end))];
}

export const cellKey = (periodStart: string, unitId: number) => `${periodStart}/${unitId}`;

export const periodFields = {
  cooling_unit_id: z.number().int(),
  period_start: z.string().describe('YYYY-MM-DD, first day of the bucket (clipped to the window)'),
  period_end: z.string().describe('YYYY-MM-DD, last day of the bucket, inclusive (clipped to the window)'),
};
