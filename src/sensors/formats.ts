// Reading files (CSV or NDJSON) -> validated readings, each with its line number, or the line's
// problem. Nothing here touches the database: whether a unit exists is checked by the loader.
//   CSV: a header naming the columns (any order): cooling_unit_id, specification_type,
//        recorded_at (or timestamp), value. Fields may be double-quoted; none contains a comma.
//   NDJSON: one object a line with the same keys.
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { hasRealDatePart } from '../http/dates.js';
import { CsvCells, csvHeader, isDecimal, readDecimal, splitCsv, type CsvColumns } from './csv.js';
import { MAX_INT4 } from '../db/int4.js';

export { HeaderError } from './csv.js';

export const SPECIFICATION_TYPES = ['TEMPERATURE', 'HUMIDITY'] as const;
export type SpecificationType = (typeof SPECIFICATION_TYPES)[number];
export type ReadingFormat = 'csv' | 'ndjson';

export interface Reading {
  line: number;
  unitId: number;
  type: SpecificationType;
  /** ISO 8601 text with an explicit zone, as PostgreSQL will read it (microseconds kept) */
  recordedAt: string;
  /** the same instant in ms (sub-millisecond part dropped), for routing a batch to its partitions */
  recordedAtMs: number;
  /** the same instant exactly: microseconds since 2000-01-01 00:00 UTC, PostgreSQL's own epoch and unit */
  recordedAtUs: number;
  value: number;
}

export interface BadRow {
  line: number;
  reason: string;
}

/** a reading, or (with a `reason`) why its line is not one */
export type ParsedLine = Reading | BadRow;

// also PostgreSQL's epoch: an accepted instant is a non-negative count of microseconds from it
const EARLIEST_MS = Date.UTC(2000, 0, 1);
// PostgreSQL refuses a UTC offset of 16 hours or more; refused here, it is a bad row, not a failed batch
const MAX_OFFSET_MINUTES = 15 * 60 + 59;
// a sensor clock a little ahead is tolerated; a reading days in the future is a broken row
const FUTURE_TOLERANCE_MS = 86_400_000;
// date, clock (seconds optional) with its fraction of a second (only after seconds), zone
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(\.\d{1,6})?)?)(Z|z|[+-]\d{2}(?::?\d{2})?)$/;
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

export class ReadingValidator {
  // readings come in runs sharing an instant (every unit at 10:15): parse each instant once
  private lastInstant: { text: unknown; parsed: Instant | string } = { text: null, parsed: '' };

  constructor(private readonly now: () => Date = () => new Date()) {}

  /** One row's fields (strings from CSV, any JSON value from NDJSON) -> a reading or a reason. */
  validate(line: number, unit: unknown, type: unknown, at: unknown, value: unknown): ParsedLine {
    const unitId = typeof unit === 'string' && /^\d{1,10}$/.test(unit) ? Number(unit) : unit;
    if (typeof unitId !== 'number' || !Number.isInteger(unitId) || unitId < 1 || unitId > MAX_INT4) {
      return bad(line, `cooling_unit_id must be a positive whole number, not ${show(unit)}`);
    }
    if (type !== 'TEMPERATURE' && type !== 'HUMIDITY') {
      return bad(line, `specification_type must be TEMPERATURE or HUMIDITY, not ${show(type)}`);
    }
    if (this.lastInstant.text !== at) this.lastInstant = { text: at, parsed: this.instant(at) };
    const instant = this.lastInstant.parsed;
    if (typeof instant === 'string') return bad(line, instant);
    const number = typeof value === 'string' && NUMBER.test(value.trim()) ? Number(value) : value;
    if (typeof number !== 'number' || !Number.isFinite(number)) {
      return bad(line, `value must be a finite number, not ${show(value)}`);
    }
    return {
      line,
      unitId,
      type,
      recordedAt: instant.recordedAt,
      recordedAtMs: instant.recordedAtMs,
      recordedAtUs: instant.recordedAtUs,
      value: number,
    };
  }

  /**
   * validate() for a CSV line's cells found in place (spans: start and end of each cell), without
   * cutting the line into strings. Only the common, valid reading is handled here; any other
   * cell goes through validate(), so every row gets the same answer and message either way.
   */
  validateCells(line: number, text: string, spans: Int32Array, columns: CsvColumns): ParsedLine {
    const unitStart = spans[2 * columns.unit]!;
    const unitEnd = spans[2 * columns.unit + 1]!;
    const typeStart = spans[2 * columns.type]!;
    const typeLength = spans[2 * columns.type + 1]! - typeStart;
    const atStart = spans[2 * columns.at]!;
    const atEnd = spans[2 * columns.at + 1]!;
    const valueStart = spans[2 * columns.value]!;
    const valueEnd = spans[2 * columns.value + 1]!;

    let unitId = 0;
    if (unitEnd - unitStart < 1 || unitEnd - unitStart > 10) return this.validateSliced(line, text, spans, columns);
    for (let at = unitStart; at < unitEnd; at++) {
      const digit = text.charCodeAt(at) - 48;
      if (digit < 0 || digit > 9) return this.validateSliced(line, text, spans, columns);
      unitId = unitId * 10 + digit;
    }
    if (unitId < 1 || unitId > MAX_INT4) return this.validateSliced(line, text, spans, columns);
    const type =
      typeLength === 11 && text.startsWith('TEMPERATURE', typeStart)
        ? 'TEMPERATURE'
        : typeLength === 8 && text.startsWith('HUMIDITY', typeStart)
          ? 'HUMIDITY'
          : null;
    if (type === null) return this.validateSliced(line, text, spans, columns);
    // the same instant as the row before: compared in place, no string made
    const last = this.lastInstant;
    if (typeof last.text !== 'string' || last.text.length !== atEnd - atStart || !text.startsWith(last.text, atStart)) {
      const at = text.slice(atStart, atEnd);
      this.lastInstant = { text: at, parsed: this.instant(at) };
    }
    const instant = this.lastInstant.parsed;
    if (typeof instant === 'string') return bad(line, instant);
    let value = readDecimal(text, valueStart, valueEnd);
    if (Number.isNaN(value)) {
      if (!isDecimal(text, valueStart, valueEnd)) return this.validateSliced(line, text, spans, columns);
      value = Number(text.slice(valueStart, valueEnd));
      if (!Number.isFinite(value)) return this.validateSliced(line, text, spans, columns);
    }
    return {
      line,
      unitId,
      type,
      recordedAt: instant.recordedAt,
      recordedAtMs: instant.recordedAtMs,
      recordedAtUs: instant.recordedAtUs,
      value,
    };
  }

  private validateSliced(line: number, text: string, spans: Int32Array, columns: CsvColumns): ParsedLine {
    const cell = (index: number) => text.slice(spans[2 * index], spans[2 * index + 1]);
    return this.validate(line, cell(columns.unit), cell(columns.type), cell(columns.at), cell(columns.value));
  }

  /** The instant in canonical ISO form, in ms and in µs, or why it is not one. */
  private instant(text: unknown): Instant | string {
    const at = typeof text === 'string' ? TIMESTAMP.exec(text.trim()) : null;
    if (!at) return `recorded_at must be an ISO 8601 timestamp with a time zone, not ${show(text)}`;
    const zone = at[4]!.toUpperCase() === 'Z' ? 'Z' : normaliseOffset(at[4]!);
    const fraction = at[3] ?? '';
    const clock = at[2]!.length === 5 ? `${at[2]}:00` : at[2]!.slice(0, 8);
    const recordedAt = `${at[1]}T${clock}${fraction}${zone}`;
    if (Number.isNaN(Date.parse(recordedAt)) || !hasRealDatePart(recordedAt) || offsetMinutes(zone) > MAX_OFFSET_MINUTES) {
      return `recorded_at is not a real instant: ${show(text)}`;
    }
    // whole seconds from Date.parse, the fraction's microseconds by hand: Date keeps only ms
    const secondsMs = Date.parse(`${at[1]}T${clock}${zone}`);
    const fractionUs = fraction === '' ? 0 : Number(fraction.slice(1).padEnd(6, '0'));
    const recordedAtMs = secondsMs + Math.floor(fractionUs / 1000);
    if (recordedAtMs < EARLIEST_MS || recordedAtMs > this.now().getTime() + FUTURE_TOLERANCE_MS) {
      return `recorded_at ${show(text)} is before 2000 or more than a day in the future`;
    }
    return { recordedAt, recordedAtMs, recordedAtUs: (secondsMs - EARLIEST_MS) * 1000 + fractionUs };
  }
}

/**
 * A stream's text in runs of whole lines (one run per chunk read, the last line of the stream
 * with or without its newline). Runs, not single lines, keep the per-line cost to the parsing.
 */
export async function* lineRuns(input: Readable): AsyncGenerator<string> {
  let partial = '';
  // a multi-byte character may straddle two chunks
  const decoder = new StringDecoder('utf8');
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    const text = partial + (typeof chunk === 'string' ? chunk : decoder.write(chunk));
    const end = text.lastIndexOf('\n') + 1;
    partial = text.slice(end);
    if (end > 0) yield text.slice(0, end);
  }
  partial += decoder.end();
  if (partial !== '') yield partial;
}

/** Guesses the format from the first non-blank line: an object is NDJSON, anything else CSV. */
export function sniffFormat(firstLine: string): ReadingFormat {
  return firstLine.trimStart().startsWith('{') ? 'ndjson' : 'csv';
}

const CR = 13;

/**
 * Parses runs of lines in the given format, a run at a time; lines are numbered from 1 across
 * runs. Blank lines are skipped; a bad header stops it.
 */
export async function* parseReadings(
  runs: AsyncIterable<string>,
  format: ReadingFormat | 'auto',
  validator: ReadingValidator,
): AsyncGenerator<ParsedLine[]> {
  let csvColumns: CsvColumns | null = null;
  let chosen: ReadingFormat | null = format === 'auto' ? null : format;
  let line = 0;
  const cells = new CsvCells();
  for await (const text of runs) {
    const parsed: ParsedLine[] = [];
    // in a run without quotes or spaces, no line has cells to strip: commas are found by indexOf
    const plainRun = text.indexOf('"') < 0 && text.indexOf(' ') < 0;
    for (let start = 0; start < text.length;) {
      const newline = text.indexOf('\n', start);
      const next = newline < 0 ? text.length : newline + 1;
      let end = newline < 0 ? text.length : newline;
      if (end > start && text.charCodeAt(end - 1) === CR) end -= 1;
      line += 1;
      if (chosen === 'csv' && csvColumns !== null) {
        // the common line, cells found in place; anything else takes the general path below
        const count = cells.find(text, start, end, plainRun);
        if (count > 0) {
          parsed.push(
            count !== csvColumns.count
              ? bad(line, `expected ${csvColumns.count} fields, found ${count}`)
              : validator.validateCells(line, text, cells.spans, csvColumns),
          );
          start = next;
          continue;
        }
      }
      const lineText = text.slice(start, end);
      start = next;
      if (lineText.trim() === '') continue;
      chosen ??= sniffFormat(lineText);
      if (chosen === 'ndjson') {
        parsed.push(parseJsonLine(line, lineText, validator));
      } else if (csvColumns === null) {
        csvColumns = csvHeader(line, lineText);
      } else {
        const cells = splitCsv(lineText);
        parsed.push(
          cells.length !== csvColumns.count
            ? bad(line, `expected ${csvColumns.count} fields, found ${cells.length}`)
            : validator.validate(line, cells[csvColumns.unit], cells[csvColumns.type], cells[csvColumns.at], cells[csvColumns.value]),
        );
      }
    }
    if (parsed.length > 0) yield parsed;
  }
}

function parseJsonLine(line: number, text: string, validator: ReadingValidator): ParsedLine {
  let row: unknown;
  try {
    row = JSON.parse(text);
  } catch {
    return bad(line, 'not valid JSON');
  }
  if (typeof row !== 'object' || row === null || Array.isArray(row)) return bad(line, 'expected a JSON object');
  const fields = row as Record<string, unknown>;
  return validator.validate(line, fields.cooling_unit_id, fields.specification_type, fields.recorded_at ?? fields.timestamp, fields.value);
}

type Instant = Pick<Reading, 'recordedAt' | 'recordedAtMs' | 'recordedAtUs'>;

/** Minutes of a normalised zone (Z or ±HH:MM), whichever the sign. */
const offsetMinutes = (zone: string) => (zone === 'Z' ? 0 : Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));

function normaliseOffset(offset: string): string {
  const digits = offset.slice(1).replace(':', '');
  return `${offset[0]}${digits.slice(0, 2)}:${digits.slice(2, 4) || '00'}`;
}

const bad = (line: number, reason: string): BadRow => ({ line, reason });

function show(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = typeof value === 'string' ? `"${value}"` : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
