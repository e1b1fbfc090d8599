// What the loadtest's scenarios need to know of a deployment, asked of its API rather than of a
// database: the employee's company and its live units (GET /api/v1/cooling-units with the JWT),
// and where its sensor history lies (a few GET /api/v1/sensor-data pages with one token): the
// first and last day with readings, the units read on the last full day and how many readings a
// day each has, and how deep the raw history of the last year goes.
import { ColdtrackApiError, ColdtrackClient, RateBudget } from '@coldtrack/client';
import { formatDay, MAX_SENSOR_WINDOW_DAYS, parseDay } from '../../src/data-surface/window.js';
import { DAY_MS } from '../../src/time.js';

/** `day` moved by `days` (negative: earlier), both YYYY-MM-DD, UTC. */
export const shiftDay = (day: string, days: number) => formatDay(parseDay(day) + days * DAY_MS);
export const daysBetween = (first: string, last: string) => (parseDay(last) - parseDay(first)) / DAY_MS + 1;

export interface SensorHistory {
  available: boolean;
  /** why not, when not available */
  reason: string;
  /** first and last day with readings in the last ten years (daily aggregates' longest window) */
  firstDay: string;
  lastDay: string;
  /** units with readings on the last full day: their readings that day, and of how many kinds (1 or 2) */
  units: { id: number; readingsPerDay: number; kinds: number }[];
  /** pages of 1,000 raw readings over every unit and the last year of the history */
  deepPages: number;
}

export interface Deployment {
  /** the UTC day the run started: analytics windows end on it */
  today: string;
  /** the JWT's company; null with API tokens only */
  companyId: number | null;
  /** the company's live units; empty when no JWT was given */
  unitIds: number[];
  sensor: SensorHistory;
}

export const NO_SENSOR_HISTORY: SensorHistory = {
  available: false,
  reason: 'not probed',
  firstDay: '',
  lastDay: '',
  units: [],
  deepPages: 0,
};

/** Fresh budgets: the loadtest's own calls never wait for a budget another client in the process spent. */
const clientFor = (baseUrl: URL, token: string) =>
  new ColdtrackClient({ baseUrl: baseUrl.href, token, budget: new RateBudget(), retries: 2 });

/** The employee's company and every live unit of it (pages of 1,000). */
export async function discoverUnits(baseUrl: URL, jwt: string): Promise<{ companyId: number; unitIds: number[] }> {
  const client = clientFor(baseUrl, jwt);
  const unitIds: number[] = [];
  for (let page = 1; ; page++) {
    const body = await client.coolingUnits.list({ page, page_size: 1000 });
    unitIds.push(...body.data.map((unit) => unit.id));
    if (!body.meta.pagination.has_next || body.data.length === 0) return { companyId: body.meta.company_id, unitIds };
  }
}

const notAvailable = (reason: string): SensorHistory => ({ ...NO_SENSOR_HISTORY, reason });

/**
 * Where the sensor history lies, in four or five requests with one token that may read
 * sensor-data: the oldest and newest daily record of the last ten years, the daily records of the
 * last full day (which units, how many readings; the last day itself when the one before has
 * none), and the raw page count of the last year.
 */
export async function probeSensorHistory(baseUrl: URL, token: string, today: string): Promise<SensorHistory> {
  const client = clientFor(baseUrl, token);
  const daily = { aggregation: 'daily', start_date: shiftDay(today, -(MAX_SENSOR_WINDOW_DAYS.daily - 1)), end_date: today } as const;
  try {
    const oldest = await client.sensorData({ ...daily, page_size: 1, page: 1 });
    const total = oldest.meta.pagination.total_count;
    if (total === 0 || !oldest.data[0]) return notAvailable(`no sensor readings between ${daily.start_date} and ${today}`);
    const newest = await client.sensorData({ ...daily, page_size: 1, page: total });
    const firstDay = oldest.data[0].timestamp.slice(0, 10);
    const lastDay = newest.data[0]?.timestamp.slice(0, 10) ?? firstDay;
    // the last day may still be filling: the one before it is whole, when it has readings
    let day = await client.sensorData({
      aggregation: 'daily',
      start_date: shiftDay(lastDay, -1),
      end_date: shiftDay(lastDay, -1),
      page_size: 1000,
    });
    if (day.data.length === 0)
      day = await client.sensorData({ aggregation: 'daily', start_date: lastDay, end_date: lastDay, page_size: 1000 });
    const perUnit = new Map<number, { id: number; readingsPerDay: number; kinds: number }>();
    for (const record of day.data) {
      const unit = perUnit.get(record.cooling_unit_id) ?? { id: record.cooling_unit_id, readingsPerDay: 0, kinds: 0 };
      perUnit.set(unit.id, { id: unit.id, readingsPerDay: unit.readingsPerDay + record.sample_count, kinds: unit.kinds + 1 });
    }
    const deepFirst = [firstDay, shiftDay(lastDay, -(MAX_SENSOR_WINDOW_DAYS.raw - 1))].sort().at(-1)!;
    const deep = await client.sensorData({ start_date: deepFirst, end_date: lastDay, page_size: 1000, page: 1 });
    return {
      available: true,
      reason: '',
      firstDay,
      lastDay,
      units: [...perUnit.values()].sort((a, b) => a.id - b.id),
      deepPages: Math.max(1, deep.meta.pagination.total_pages),
    };
  } catch (error) {
    if (error instanceof ColdtrackApiError) return notAvailable(`GET /api/v1/sensor-data answered ${error.status} (${error.code})`);
    throw error;
  }
}
