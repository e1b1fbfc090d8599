// The spans of history one ingest load added to, per (unit, specification type), for the change
// feed (sql/migrations/013_sensor-changes.sql): computed from readings the load already holds, so
// recording them costs one small INSERT per load.
// A series' readings form one span while no two consecutive ones are more than an hour apart:
// every hour and day inside a span then gained a reading, and a partner re-reading the span's
// buckets re-reads only buckets that changed. A load scattered over many hours (late readings
// from a gateway's buffer) splits at its widest gaps into at most MAX_SPANS_PER_SERIES spans, so
// a load never records more than that per series.
import type { SpecificationType } from './formats.js';

/** What a span needs of a reading: the instant exactly (microseconds since 2000-01-01 UTC). */
export interface ReadingInstant {
  unitId: number;
  type: SpecificationType;
  recordedAtUs: number;
}

/** One load's spans as the parallel arrays sensor_changes_record takes. */
export interface ChangeSpans {
  units: number[];
  types: SpecificationType[];
  firsts: string[];
  lasts: string[];
  counts: number[];
}

const HOUR_US = 3_600_000_000;
export const MAX_SPANS_PER_SERIES = 24;
const Y2000_MS = Date.UTC(2000, 0, 1);

/** The instant as ISO 8601 text with all six fractional digits (PostgreSQL reads it exactly). */
export function instantText(us: number): string {
  const ms = Math.floor(us / 1000);
  const micros = us - ms * 1000;
  return new Date(ms + Y2000_MS).toISOString().replace('Z', `${String(micros).padStart(3, '0')}Z`);
}

export function changeSpans(readings: Iterable<ReadingInstant>): ChangeSpans {
  // a number per series (unit id and type index), not a string built per reading
  const series = new Map<number, { unitId: number; type: SpecificationType; instants: number[] }>();
  for (const reading of readings) {
    const key = reading.unitId * 2 + (reading.type === 'TEMPERATURE' ? 1 : 0);
    let entry = series.get(key);
    if (!entry) series.set(key, (entry = { unitId: reading.unitId, type: reading.type, instants: [] }));
    entry.instants.push(reading.recordedAtUs);
  }
  const spans: ChangeSpans = { units: [], types: [], firsts: [], lasts: [], counts: [] };
  for (const { unitId, type, instants } of series.values()) {
    const sorted = inOrder(instants);
    let start = 0;
    for (const end of splitPoints(sorted)) {
      spans.units.push(unitId);
      spans.types.push(type);
      spans.firsts.push(instantText(sorted[start]!));
      spans.lasts.push(instantText(sorted[end - 1]!));
      spans.counts.push(end - start);
      start = end;
    }
  }
  return spans;
}

/** Ascending; a load's readings usually already are, which one pass confirms. */
function inOrder(instants: number[]): ArrayLike<number> {
  for (let i = 1; i < instants.length; i++) {
    if (instants[i]! < instants[i - 1]!) return Float64Array.from(instants).sort();
  }
  return instants;
}

/** Where each span ends (exclusive indexes, ascending; the last is the length). */
function splitPoints(sorted: ArrayLike<number>): number[] {
  let gaps: number[] = [];
  for (let i = 1; i < sorted.length; i++) if (sorted[i]! - sorted[i - 1]! > HOUR_US) gaps.push(i);
  if (gaps.length >= MAX_SPANS_PER_SERIES) {
    // keep the widest gaps as the boundaries, in their order
    gaps = gaps
      .sort((a, b) => sorted[b]! - sorted[b - 1]! - (sorted[a]! - sorted[a - 1]!) || a - b)
      .slice(0, MAX_SPANS_PER_SERIES - 1)
      .sort((a, b) => a - b);
  }
  gaps.push(sorted.length);
  return gaps;
}
