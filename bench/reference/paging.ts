// The window, period buckets and pages of the analytics endpoints, computed as the project pages
// them (UTC days; ISO weeks from Monday; calendar months; cells of bucket x unit), so both servers
// answer the same records for the same page.
import type { Query } from './access.js';

export const DAY = 86_400_000;

export interface Bucket {
  start: number;
  end: number;
}

const day = (text: string) => Date.UTC(+text.slice(0, 4), +text.slice(5, 7) - 1, +text.slice(8, 10));
export const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function bucketsOf(start: number, end: number, period: string): Bucket[] {
  const buckets: Bucket[] = [];
  for (let first = start; first <= end;) {
    const date = new Date(first);
    const next =
      period === 'week'
        ? first + (7 - ((date.getUTCDay() + 6) % 7)) * DAY
        : period === 'month'
          ? Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)
          : first + DAY;
    buckets.push({ start: first, end: Math.min(next - DAY, end) });
    first = next;
  }
  return buckets;
}

export function pagination(page: number, pageSize: number, total: number) {
  const pages = Math.ceil(total / pageSize);
  return { page, page_size: pageSize, total_count: total, total_pages: pages, has_next: page < pages, has_previous: page > 1 };
}

export function windowOf(query: Query) {
  const today = Math.floor(Date.now() / DAY) * DAY;
  const end = query.end_date ? day(query.end_date) : today;
  const start = query.start_date ? day(query.start_date) : end - 29 * DAY;
  return { start, end, period: query.period ?? 'day', page: Number(query.page ?? 1), pageSize: Number(query.page_size ?? 100) };
}

/** the page's (bucket x unit) cells, as the project pages them */
export function grid(query: Query, unitIds: number[]) {
  const w = windowOf(query);
  const all = bucketsOf(w.start, w.end, w.period);
  const total = all.length * unitIds.length;
  const cells: { bucket: Bucket; unitId: number }[] = [];
  for (let i = (w.page - 1) * w.pageSize; i < Math.min(total, w.page * w.pageSize); i++) {
    cells.push({ bucket: all[Math.floor(i / unitIds.length)]!, unitId: unitIds[i % unitIds.length]! });
  }
  const buckets = [...new Set(cells.map((cell) => cell.bucket))];
  const days: string[] = [];
  const starts: string[] = [];
  const ends: string[] = [];
  for (const bucket of buckets) {
    for (let d = bucket.start; d <= bucket.end; d += DAY) {
      days.push(iso(d));
      starts.push(iso(bucket.start));
      ends.push(iso(bucket.end));
    }
  }
  return {
    w,
    cells,
    buckets,
    unitIds: [...new Set(cells.map((cell) => cell.unitId))].sort((a, b) => a - b),
    days,
    starts,
    ends,
    meta: (companyId: number) => metaOf(query, w, total, companyId),
  };
}

/** A page's meta: the company, the filters as read, and the pagination of `total` records. */
export function metaOf(query: Query, w: ReturnType<typeof windowOf>, total: number, companyId: number) {
  return {
    company_id: companyId,
    filters: {
      start_date: iso(w.start),
      end_date: iso(w.end),
      period: w.period,
      cooling_unit_id: query.cooling_unit_id ? Number(query.cooling_unit_id) : null,
      location_id: query.location_id ? Number(query.location_id) : null,
    },
    pagination: pagination(w.page, w.pageSize, total),
  };
}
