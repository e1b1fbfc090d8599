// The reporting window and its period buckets: one parser for start_date/end_date/period and one
// definition of buckets (UTC days; ISO weeks from Monday; calendar months), clipped to the window.
import { z } from 'zod';
import { isRealDate, utcDay } from '../http/dates.js';
import { invalidRequest } from '../http/errors.js';
import { DAY_MS } from '../time.js';

export const PERIODS = ['day', 'week', 'month'] as const;
export type Period = (typeof PERIODS)[number];
/** The longest window a request may ask for, in days (docs/contract.md, "Query parameters"). */
export const MAX_WINDOW_DAYS = 366;
/**
 * Sensor history's longest window by aggregation: daily aggregates reach ten years. Published in
 * the OpenAPI document (the aggregation parameter's `x-max-window-days`), from which the client's
 * copy is generated (client/openapi.ts), so this is the only place the figures are written.
 */
export const MAX_SENSOR_WINDOW_DAYS = { raw: MAX_WINDOW_DAYS, hourly: MAX_WINDOW_DAYS, daily: 3660 } as const;
export const DEFAULT_WINDOW_DAYS = 30;

export const dateParam = z
  .string({ error: 'must be given once, as YYYY-MM-DD' })
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date as YYYY-MM-DD')
  .refine((text) => isRealDate(+text.slice(0, 4), +text.slice(5, 7), +text.slice(8, 10)), 'is not a real calendar date')
  // the document says what the check says: a real calendar date, not only the digits' shape
  .meta({ format: 'date' });

export const periodParam = z.enum(PERIODS, { error: 'must be one of day, week, or month' });

/** A UTC day as milliseconds since the epoch at 00:00. */
export type Day = number;

export const parseDay = (text: string): Day => utcDay(+text.slice(0, 4), +text.slice(5, 7) - 1, +text.slice(8, 10));
// Requests name the same few hundred days over and over, and Date's ISO formatting cost a small
// page ~10 us: each day is formatted once (the set is cleared past 10,000, a bound, not an LRU).
const formattedDays = new Map<Day, string>();
export function formatDay(day: Day): string {
  let text = formattedDays.get(day);
  if (text === undefined) {
    if (formattedDays.size >= 10_000) formattedDays.clear();
    formattedDays.set(day, (text = new Date(day).toISOString().slice(0, 10)));
  }
  return text;
}
export const today = (now: Date): Day => utcDay(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());

export interface Window {
  start: Day;
  end: Day; // inclusive
}

/** 0001-01-01, the first day a date parameter can name. */
export const FIRST_DAY = utcDay(1, 0, 1);

/** The parameters naming a window's first and last day: the data surface's, unless a route names its own. */
const DATE_PARAMETERS = { start: 'start_date', end: 'end_date' } as const;

/** Defaults: the end today, the start 29 days before it. Reversed or too long: 400 naming the parameter. */
export function resolveWindow(
  query: object,
  now: Date,
  maxDays = MAX_WINDOW_DAYS,
  names: { start: string; end: string } = DATE_PARAMETERS,
): Window {
  const dates = query as Partial<Record<string, unknown>>;
  const [startText, endText] = [dates[names.start], dates[names.end]] as Array<string | undefined>;
  const end = endText ? parseDay(endText) : today(now);
  // the default start never falls before the calendar's first day (end_date=0001-01-01 would
  // otherwise reach into the year 0, which no date parameter can name and the database refuses)
  const start = startText ? parseDay(startText) : Math.max(end - (DEFAULT_WINDOW_DAYS - 1) * DAY_MS, FIRST_DAY);
  if (end < start) throw invalidRequest(names.end, `${names.end} must not be before ${names.start}`);
  const days = (end - start) / DAY_MS + 1;
  if (days > maxDays) {
    throw invalidRequest(startText ? names.start : names.end, `The window spans ${days} days; the longest allowed is ${maxDays}`);
  }
  return { start, end };
}

export interface Bucket {
  readonly start: Day;
  readonly end: Day; // inclusive
}

function nextBucketStart(day: Day, period: Period): Day {
  if (period === 'day') return day + DAY_MS;
  const date = new Date(day);
  if (period === 'week') return day + (7 - ((date.getUTCDay() + 6) % 7)) * DAY_MS; // next Monday
  return utcDay(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

// Requests ask for the same few windows over and over (the last 30 days, this year): each
// window's buckets are built once, like formattedDays (cleared past 1,000 windows, a bound, not an
// LRU), and shared between requests, which only read them.
const bucketsOfWindow = new Map<string, readonly Bucket[]>();

/** Period buckets covering the window, the first and last clipped to it (shared: read-only). */
export function bucketsOf(window: Window, period: Period): readonly Bucket[] {
  const key = `${window.start}/${window.end}/${period}`;
  let buckets = bucketsOfWindow.get(key);
  if (buckets === undefined) {
    const built: Bucket[] = [];
    for (let start = window.start; start <= window.end;) {
      const next = nextBucketStart(start, period);
      built.push({ start, end: Math.min(next - DAY_MS, window.end) });
      start = next;
    }
    if (bucketsOfWindow.size >= 1000) bucketsOfWindow.clear();
    bucketsOfWindow.set(key, (buckets = built));
  }
  return buckets;
}
