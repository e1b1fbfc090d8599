// What an export of sensor history is made of, before anything is fetched: the date windows the
// service accepts (SENSOR_MAX_WINDOW_DAYS, from its OpenAPI document), the files' names and how a record is
// written in each format.
import { SENSOR_MAX_WINDOW_DAYS } from '../openapi.js';
import type { SensorRecord } from '../types.js';

export const AGGREGATIONS = ['raw', 'hourly', 'daily'] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];
export const FORMATS = ['csv', 'ndjson'] as const;
export type ExportFormat = (typeof FORMATS)[number];

/** The service's longest window per request (from its OpenAPI document, like the types). */
export const MAX_WINDOW_DAYS: Record<Aggregation, number> = SENSOR_MAX_WINDOW_DAYS;

const DAY_MS = 86_400_000;

/** A UTC day written YYYY-MM-DD as ms since the epoch, or null when it is no such day. */
export function parseDay(text: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1) return null;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? date.getTime() : null;
}

export function formatDay(ms: number): string {
  const date = new Date(ms);
  return `${String(date.getUTCFullYear()).padStart(4, '0')}-${String(date.getUTCMonth() + 1).padStart(2, '0')}-${String(date.getUTCDate()).padStart(2, '0')}`;
}

export interface DateWindow {
  start_date: string;
  end_date: string;
}

/** [from, to] (inclusive days) cut into consecutive windows of at most `maxDays` days. */
export function windowsOf(from: string, to: string, maxDays: number): DateWindow[] {
  const first = parseDay(from);
  const last = parseDay(to);
  if (first === null || last === null || first > last) throw new RangeError(`not a date range: ${from}..${to}`);
  const windows: DateWindow[] = [];
  for (let start = first; start <= last; start += maxDays * DAY_MS) {
    windows.push({ start_date: formatDay(start), end_date: formatDay(Math.min(last, start + (maxDays - 1) * DAY_MS)) });
  }
  return windows;
}

export const unitFileName = (unitId: number, format: ExportFormat) => `cooling-unit-${unitId}.${format}`;

export const CSV_COLUMNS = ['timestamp', 'cooling_unit_id', 'specification_type', 'value', 'sample_count', 'min', 'max'] as const;

/** What a file starts with, before any record. */
export const fileHeader = (format: ExportFormat) => (format === 'csv' ? `${CSV_COLUMNS.join(',')}\n` : '');

/**
 * One line per record. CSV: the columns above, min and max empty for raw readings, numbers as
 * JavaScript writes them (the shortest text that reads back as the same number). NDJSON: the
 * record exactly as the service sent it.
 */
export function recordLine(record: SensorRecord, format: ExportFormat): string {
  if (format === 'ndjson') return `${JSON.stringify(record)}\n`;
  const cell = (value: number | undefined) => (value === undefined ? '' : String(value));
  return `${record.timestamp},${record.cooling_unit_id},${record.specification_type},${record.value},${record.sample_count},${cell(record.min)},${cell(record.max)}\n`;
}

/** Records of one unit come ordered by (timestamp, specification_type): this compares two. */
export function compareKeys(a: RecordKey, b: RecordKey): number {
  const byTime = Date.parse(a.timestamp) - Date.parse(b.timestamp);
  return byTime !== 0 ? byTime : a.specification_type < b.specification_type ? -1 : a.specification_type > b.specification_type ? 1 : 0;
}

export interface RecordKey {
  timestamp: string;
  specification_type: string;
}
