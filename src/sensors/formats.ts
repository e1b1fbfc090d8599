// Reading files (CSV or NDJSON) -> validated readings, each with its line number, or the line's
// problem. Nothing here touches the database: whether a unit exists is checked by the loader.
//   CSV: a header naming the columns (any order): cooling_unit_id, specification_type,
//        recorded_at (or timestamp), value. Fields may be double-quoted; none contains a comma.
//   NDJSON: one object a line with the same keys.
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { hasRealDatePart } from '../http/dates.js';

export const SPECIFICATION_TYPES = ['TEMPERATURE', 'HUMIDITY'] as const;
export type SpecificationType = (typeof SPECIFICATION_TYPES)[number];
export type ReadingFormat = 'csv' | 'ndjson';

export interface Reading {
  line: number;
  unitId: number;
  type: SpecificationType;
  /** ISO 8601 text with an explicit zone, as PostgreSQL will read it (microseconds kept) */
  recordedAt: string;
  /** the same instant in ms, for routing a batch to its partitions */
  recordedAtMs: number;
  value: number;
}

export interface BadRow {
  line: number;
  reason: string;
}

/** a reading, or (with a `reason`) why its line is not one */
export type ParsedLine = Reading | BadRow;

const MAX_UNIT_ID = 2_147_483_647;
const EARLIEST_MS = Date.UTC(2000, 0, 1);
// a sensor clock a little ahead is tolerated; a reading days in the future is a broken row
const FUTURE_TOLERANCE_MS = 86_400_000;
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)(Z|z|[+-]\d{2}(?::?\d{2})?)$/;
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

export class ReadingValidator {
  // readings come in runs sharing an instant (every unit at 10:15): parse each instant once
  private lastInstant: { text: unknown; parsed: { recordedAt: string; recordedAtMs: number } | string } = { text: null, parsed: '' };

  constructor(private readonly now: () => Date = () => new Date()) {}

  /** One row's fields (strings from CSV, any JSON value from NDJSON) -> a reading or a reason. */
  validate(line: number, unit: unknown, type: unknown, at: unknown, value: unknown): ParsedLine {
    const unitId = typeof unit === 'string' && /^\d{1,10}$/.test(unit) ? Number(unit) : unit;
    if (typeof unitId !== 'number' || !Number.isInteger(unitId) || unitId < 1 || unitId > MAX_UNIT_ID) {
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
    return { line, unitId, type, recordedAt: instant.recordedAt, recordedAtMs: instant.recordedAtMs, value: number };
  }

  /** The instant in canonical ISO form and in ms, or why it is not one. */
  private instant(text: unknown): { recordedAt: string; recordedAtMs: number } | string {
    const at = typeof text === 'string' ? TIMESTAMP.exec(text.trim()) : null;
    if (!at) return `recorded_at must be an ISO 8601 timestamp with a time zone, not ${show(text)}`;
    const zone = at[3]!.toUpperCase() === 'Z' ? 'Z' : normaliseOffset(at[3]!);
    const clock = at[2]!.length === 5 ? `${at[2]}:00` : at[2]!;
    const recordedAt = `${at[1]}T${clock}${zone}`;
    const recordedAtMs = Date.parse(recordedAt);
    if (Number.isNaN(recordedAtMs) || !hasRealDatePart(recordedAt)) return `recorded_at is not a real instant: ${show(text)}`;
    if (recordedAtMs < EARLIEST_MS || recordedAtMs > this.now().getTime() + FUTURE_TOLERANCE_MS) {
      return `recorded_at ${show(text)} is before 2000 or more than a day in the future`;
    }
    return { recordedAt, recordedAtMs };
  }
}

export interface Lines {
  /** number of the first line (from 1) */
  first: number;
  lines: string[];
}

/**
 * A stream's lines in runs (one run per chunk read), numbered from 1; a last line without a
 * newline counts too. Runs, not single lines, keep the per-line cost to the parsing itself.
 */
export async function* lineRuns(input: Readable): AsyncGenerator<Lines> {
  let partial = '';
  let next = 1;
  // a multi-byte character may straddle two chunks
  const decoder = new StringDecoder('utf8');
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    const lines = (partial + (typeof chunk === 'string' ? chunk : decoder.write(chunk))).split('\n');
    partial = lines.pop()!;
    if (lines.length === 0) continue;
    yield { first: next, lines: lines.map(withoutCr) };
    next += lines.length;
  }
  partial += decoder.end();
  if (partial !== '') yield { first: next, lines: [withoutCr(partial)] };
}

const withoutCr = (line: string) => (line.endsWith('\r') ? line.slice(0, -1) : line);

/** Guesses the format from the first non-blank line: an object is NDJSON, anything else CSV. */
export function sniffFormat(firstLine: string): ReadingFormat {
  return firstLine.trimStart().startsWith('{') ? 'ndjson' : 'csv';
}

/** Parses runs of lines in the given format, a run at a time. Blank lines are skipped; a bad header stops it. */
export async function* parseReadings(
  runs: AsyncIterable<Lines>,
  format: ReadingFormat | 'auto',
  validator: ReadingValidator,
): AsyncGenerator<ParsedLine[]> {
  let csvColumns: CsvColumns | null = null;
  let chosen: ReadingFormat | null = format === 'auto' ? null : format;
  for await (const { first, lines } of runs) {
    const parsed: ParsedLine[] = [];
    for (let index = 0; index < lines.length; index++) {
      const text = lines[index]!;
      const line = first + index;
      if (text.trim() === '') continue;
      chosen ??= sniffFormat(text);
      if (chosen === 'ndjson') {
        parsed.push(parseJsonLine(line, text, validator));
      } else if (csvColumns === null) {
        csvColumns = csvHeader(line, text);
      } else {
        const cells = splitCsv(text);
        parsed.push(cells.length !== csvColumns.count
          ? bad(line, `expected ${csvColumns.count} fields, found ${cells.length}`)
          : validator.validate(line, cells[csvColumns.unit], cells[csvColumns.type], cells[csvColumns.at], cells[csvColumns.value]));
      }
    }
    if (parsed.length > 0) yield parsed;
  }
}

interface CsvColumns {
  count: number;
  unit: number;
  type: number;
  at: number;
  value: number;
}

export class HeaderError extends Error {}

function csvHeader(line: number, text: string): CsvColumns {
  const names = splitCsv(text).map((name) => name.trim().toLowerCase());
  const find = (...candidates: string[]) => names.findIndex((name) => candidates.includes(name));
  const columns = { count: names.length, unit: find('cooling_unit_id'), type: find('specification_type'),
    at: find('recorded_at', 'timestamp'), value: find('value') };
  if (columns.unit < 0 || columns.type < 0 || columns.at < 0 || columns.value < 0) {
    throw new HeaderError(`line ${line}: the CSV header must name cooling_unit_id, specification_type, recorded_at (or timestamp) and value`);
  }
  return columns;
}

function splitCsv(text: string): string[] {
  const cells = text.split(',');
  // the common line has neither quotes nor padding: nothing more to do
  if (!text.includes('"') && !text.includes(' ')) return cells;
  return cells.map((cell) => {
    const trimmed = cell.trim();
    return trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1) : trimmed;
  });
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
