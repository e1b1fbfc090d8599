// Demo and benchmark readings: N units x D days at 15-minute intervals, both types, in time
// order (every unit at one instant, then the next instant), as CSV or NDJSON text. The same
// options give the same bytes: values come from a seeded PRNG consumed in a fixed order.
import { createRandom } from '../seed/random.js';
import type { ReadingFormat } from './formats.js';
import { DAY_MS, HOUR_MS } from '../time.js';

export const READING_INTERVAL_MS = 15 * 60_000;
const CHUNK_LINES = 2000;

export interface GeneratorOptions {
  units: number;
  days: number;
  /** readings cover [end - days, end); default: today 00:00 UTC */
  end?: Date;
  firstUnitId?: number;
  /** the units' ids, `units` of them, instead of firstUnitId and the ids after it */
  unitIds?: readonly number[];
  seed?: number;
  format?: ReadingFormat;
}

export const readingCount = (options: GeneratorOptions) => options.units * 2 * options.days * (DAY_MS / READING_INTERVAL_MS);

export function defaultEnd(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

/** The readings as text, a few thousand lines per chunk (CSV starts with its header). */
export function* readingChunks(options: GeneratorOptions): Generator<string> {
  const format = options.format ?? 'csv';
  const end = (options.end ?? defaultEnd()).getTime();
  const start = end - options.days * DAY_MS;
  const firstUnitId = options.firstUnitId ?? 1;
  const random = createRandom(options.seed ?? 1);
  // each unit has its own climate: a set point between 2 and 8 C and a humidity level
  if (options.unitIds && options.unitIds.length !== options.units) throw new Error('unitIds must list `units` ids');
  const units = Array.from({ length: options.units }, (_, index) => ({
    id: options.unitIds?.[index] ?? firstUnitId + index,
    temperature: random.float(2, 8),
    humidity: random.float(85, 93),
  }));
  const line =
    format === 'csv'
      ? (id: number, type: string, at: string, value: string) => `${id},${type},${at},${value}\n`
      : (id: number, type: string, at: string, value: string) =>
          `{"cooling_unit_id":${id},"specification_type":"${type}","recorded_at":"${at}","value":${value}}\n`;

  let chunk = format === 'csv' ? 'cooling_unit_id,specification_type,recorded_at,value\n' : '';
  let lines = 0;
  for (let at = start; at < end; at += READING_INTERVAL_MS) {
    const text = new Date(at).toISOString().replace('.000Z', 'Z');
    // warmest mid-afternoon UTC, when doors open most
    const cycle = Math.sin((2 * Math.PI * (((at / HOUR_MS) % 24) - 9)) / 24);
    for (const unit of units) {
      const temperature = unit.temperature + 1.2 * cycle + 0.8 * (random.next() - 0.5);
      const humidity = Math.min(97, Math.max(80, unit.humidity - 2.5 * cycle + 4 * (random.next() - 0.5)));
      chunk += line(unit.id, 'TEMPERATURE', text, temperature.toFixed(2));
      chunk += line(unit.id, 'HUMIDITY', text, humidity.toFixed(1));
      lines += 2;
      if (lines >= CHUNK_LINES) {
        yield chunk;
        chunk = '';
        lines = 0;
      }
    }
  }
  if (chunk !== '') yield chunk;
}
