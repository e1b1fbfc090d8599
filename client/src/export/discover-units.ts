// Finds the units of an export of "all" units, once, on its first run: from a single day of
// GET /analytics/utilization when the token has that scope (one row per unit, readings or not),
// otherwise from the units named by the daily sensor-data pages over the whole range.
import { ColdtrackApiError } from '../errors.js';
import type { ColdtrackClient } from '../index.js';
import type { CallOptions } from '../transport.js';
import { MAX_WINDOW_DAYS, windowsOf } from './plan.js';

export interface FoundUnits {
  unitIds: number[];
  /** how they were found: "utilization", "sensor-data" or "bulk" (as the bulk pull names them); "listed" for ids asked for */
  from: string;
}

/**
 * `bulk`: without the utilization scope, no units are looked for ("bulk": the bulk pull's own
 * records name them as they come), rather than reading the daily pages of the whole fleet first.
 */
export async function discoverUnits(
  client: ColdtrackClient,
  range: { from: string; to: string },
  call: CallOptions,
  countPage: () => void,
  bulk = false,
): Promise<FoundUnits> {
  const ids = new Set<number>();
  try {
    const day = { start_date: range.from, end_date: range.from, period: 'day' as const };
    for await (const page of client.pages('utilization', day, call)) {
      countPage();
      for (const record of page.data) ids.add(record.cooling_unit_id);
    }
    return { unitIds: ascending(ids), from: 'utilization' };
  } catch (error) {
    // without the utilization scope: fall back to the sensor history itself
    if (!(error instanceof ColdtrackApiError && error.status === 403)) throw error;
  }
  if (bulk) return { unitIds: [], from: 'bulk' };
  for (const window of windowsOf(range.from, range.to, MAX_WINDOW_DAYS.daily)) {
    for await (const page of client.pages('sensorData', { ...window, aggregation: 'daily' }, call)) {
      countPage();
      for (const record of page.data) ids.add(record.cooling_unit_id);
    }
  }
  return { unitIds: ascending(ids), from: 'sensor-data' };
}

const ascending = (ids: Set<number>) => [...ids].sort((a, b) => a - b);
