// What every analytics endpoint shares: its query parameters, the echo of the filters in effect,
// and pagination over the (period bucket x cooling unit) grid of records.
import { z } from 'zod';
import { paginationFor, paginationQuery, queryInteger } from '../http/schemas.js';
import type { UnitScope } from './access.js';
import { type Bucket, type Period, type Window, bucketsOf, dateParam, formatDay, periodParam } from './window.js';

const MAX_ID = 2_147_483_647;

export const analyticsQuery = {
  start_date: dateParam.optional().describe('YYYY-MM-DD, inclusive (UTC); default end_date - 29 days'),
  end_date: dateParam.optional().describe('YYYY-MM-DD, inclusive (UTC); default today'),
  period: periodParam.default('day').describe('Bucket size; weeks start on Monday'),
  ...paginationQuery,
  cooling_unit_id: queryInteger(1, MAX_ID).optional().describe('Only this unit (404 when the token may not read it)'),
  location_id: queryInteger(1, MAX_ID).optional().describe('Only units at this location'),
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
  pagination: ReturnType<typeof paginationFor>;
}

/**
 * Records are one per (bucket, unit), ordered by period_start then cooling_unit_id. The grid is
 * known without touching data, so total_count is exact and free, and a page queries only its own
 * buckets and units: page 300 costs what page 1 costs.
 */
export function gridPage(window: Window, period: Period, unitScope: UnitScope, page: number, pageSize: number): GridPage {
  const allBuckets = bucketsOf(window, period);
  const units = unitScope.unitIds;
  const total = allBuckets.length * units.length;
  const cells: GridCell[] = [];
  for (let index = (page - 1) * pageSize; index < Math.min(total, page * pageSize); index++) {
    cells.push({ bucket: allBuckets[Math.floor(index / units.length)]!, unitId: units[index % units.length]! });
  }
  const buckets = [...new Set(cells.map((cell) => cell.bucket))];
  const unitIds = [...new Set(cells.map((cell) => cell.unitId))].sort((a, b) => a - b);
  return { cells, buckets, unitIds, pagination: paginationFor(page, pageSize, total) };
}

/** SQL parameters for a list of buckets: parallel arrays of start and inclusive end dates. */
export function bucketParams(buckets: Bucket[]): [string[], string[]] {
  return [buckets.map((bucket) => formatDay(bucket.start)), buckets.map((bucket) => formatDay(bucket.end))];
}

export const cellKey = (periodStart: string, unitId: number) => `${periodStart}/${unitId}`;

export const periodFields = {
  cooling_unit_id: z.number().int(),
  period_start: z.string().describe('YYYY-MM-DD, first day of the bucket (clipped to the window)'),
  period_end: z.string().describe('YYYY-MM-DD, last day of the bucket, inclusive (clipped to the window)'),
};
