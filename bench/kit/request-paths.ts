// The requests the scenarios send, as paths on any data: the bench's fixed data set
// (scenarios.ts) and a deployment's own units and dates (loadtest-plan.ts) fill in the same
// shapes, so the loadtest sends what the bench measures.

/** Both kinds of reading, as every sensor-data request of the scenarios asks. */
const KINDS = 'specification_type=TEMPERATURE,HUMIDITY';

/** An analytics or sensor-data window, both days included (YYYY-MM-DD). */
export const window = (first: string, last: string) => `start_date=${first}&end_date=${last}`;

/** What the mixed partner traffic reads: windows ending where the data does, and its units. */
export interface MixedData {
  /** a unit to filter one utilization request in three by; undefined: none known */
  unit: number | undefined;
  /** a month of analytics, for request i */
  month: string;
  quarter: string;
  year: string;
  /** a day of one unit's raw readings, for request i; null: no sensor-data (utilization instead) */
  sensorDay: (() => { unitId: number; day: string }) | null;
}

export const requestPaths = {
  /** the cheapest real data request (P1) */
  revenuePage: (window: string, page: number) => `/api/v1/analytics/revenue?${window}&page_size=10&page=${page}`,
  /** one unit's raw readings, 1,000 a page (P2) */
  rawPage: (unitId: number, window: string, page: number) =>
    `/api/v1/sensor-data?cooling_unit_id=${unitId}&${window}&${KINDS}&page_size=1000&page=${page}`,
  /** one unit's hourly records, 1,000 a page */
  hourlyPage: (unitId: number, window: string, page: number) =>
    `/api/v1/sensor-data?cooling_unit_id=${unitId}&${window}&aggregation=hourly&${KINDS}&page_size=1000&page=${page}`,
  /** every unit's raw readings, 1,000 a page (P3 walks deep into it) */
  deepPage: (window: string, page: number) => `/api/v1/sensor-data?${window}&${KINDS}&page_size=1000&page=${page}`,
  /** every unit's hourly records as one bulk pull */
  bulk: (window: string, format: 'csv' | 'parquet') => `/api/v1/sensor-data/bulk?${window}&aggregation=hourly&${KINDS}&format=${format}`,
  /** the largest analytics page: a day a record over a year (P8) */
  largePage: (endpoint: 'users' | 'utilization' | 'revenue' | 'impact', window: string, page: number) =>
    `/api/v1/analytics/${endpoint}?${window}&period=day&page_size=1000&page=${page}`,
  /** the management read */
  tokenList: '/api/v1/api-tokens?page_size=20',
  /**
   * Request i of the mixed partner traffic: utilization 45 %, users 15 %, revenue 15 %, impact
   * 10 %, sensor-data 15 % (utilization when there is none).
   */
  mixed(i: number, data: MixedData): string {
    const kind = i % 20;
    if (kind < 9 || (kind >= 17 && !data.sensorDay)) {
      const filter = data.unit !== undefined && i % 3 === 0 ? `&cooling_unit_id=${data.unit}` : '';
      return `/api/v1/analytics/utilization?${data.month}&period=${i % 2 ? 'week' : 'day'}&page_size=${10 + (i % 10) * 10}${filter}`;
    }
    if (kind < 12) return `/api/v1/analytics/users?${data.quarter}&period=week&page_size=13`;
    if (kind < 15) return `/api/v1/analytics/revenue?${data.quarter}&period=week&page_size=50&payment_status=paid`;
    if (kind < 17) return `/api/v1/analytics/impact?${data.year}&period=month&page_size=20`;
    const { unitId, day } = data.sensorDay!();
    return `/api/v1/sensor-data?cooling_unit_id=${unitId}&${window(day, day)}&page_size=100`;
  },
};
