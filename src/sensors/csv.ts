// CSV lines of readings (formats.ts): the header, the general split (quoted or padded cells), and
// the fast path for the common line, whose cells are found and read in place: no string per
// line or per cell, which is most of what parsing a large file costs in garbage.
// Fields may be double-quoted; none contains a comma.

export interface CsvColumns {
  count: number;
  unit: number;
  type: number;
  at: number;
  value: number;
}

export class HeaderError extends Error {}

export function csvHeader(line: number, text: string): CsvColumns {
  const names = splitCsv(text).map((name) => name.trim().toLowerCase());
  const find = (...candidates: string[]) => names.findIndex((name) => candidates.includes(name));
  const columns = {
    count: names.length,
    unit: find('cooling_unit_id'),
    type: find('specification_type'),
    at: find('recorded_at', 'timestamp'),
    value: find('value'),
  };
  if (columns.unit < 0 || columns.type < 0 || columns.at < 0 || columns.value < 0) {
    throw new HeaderError(
      `line ${line}: the CSV header must name cooling_unit_id, specification_type, recorded_at (or timestamp) and value`,
    );
  }
  return columns;
}

export function splitCsv(text: string): string[] {
  const cells = text.split(',');
  // the common line has neither quotes nor padding: nothing more to do
  if (!text.includes('"') && !text.includes(' ')) return cells;
  return cells.map((cell) => {
    const trimmed = cell.trim();
    return trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1) : trimmed;
  });
}

const COMMA = 44;
const QUOTE = 34;
const SPACE = 32;

/** Where each cell of a line starts and ends (spans[2i], spans[2i + 1]), reused line after line. */
export class CsvCells {
  spans: Int32Array = new Int32Array(16);

  /**
   * The cells of text[start, end) as splitCsv would cut them, or 0 when the line needs splitCsv:
   * it holds a quote or a space (to strip), or no comma (it may be blank). `plainRun`: the run
   * the line is in has no quote or space at all, so commas can be found with indexOf.
   */
  find(text: string, start: number, end: number, plainRun: boolean): number {
    let cells = 1;
    this.spans[0] = start;
    if (plainRun) {
      for (let comma = text.indexOf(',', start); comma >= 0 && comma < end; comma = text.indexOf(',', comma + 1)) {
        this.cut(cells++, comma);
      }
    } else {
      for (let at = start; at < end; at++) {
        const code = text.charCodeAt(at);
        if (code === COMMA) this.cut(cells++, at);
        else if (code === QUOTE || code === SPACE) return 0;
      }
    }
    if (cells === 1) return 0;
    this.spans[2 * cells - 1] = end;
    return cells;
  }

  private cut(cell: number, comma: number) {
    if (2 * cell + 1 >= this.spans.length) {
      const larger = new Int32Array(this.spans.length * 2);
      larger.set(this.spans);
      this.spans = larger;
    }
    this.spans[2 * cell - 1] = comma;
    this.spans[2 * cell] = comma + 1;
  }
}

// exact doubles: 10^0 .. 10^15
const POWERS_OF_TEN = Array.from({ length: 16 }, (_, power) => 10 ** power);

/**
 * A plain decimal cell ([+-]digits[.digits], at most 15 digits) read in place, the same double
 * Number() gives: the digits are an integer below 2^53 and the power of ten is exact, so the one
 * division rounds correctly. NaN for anything else (exponents, more digits, other text), which
 * the caller then reads the general way.
 */
export function readDecimal(text: string, start: number, end: number): number {
  let at = start;
  let code = text.charCodeAt(at);
  const negative = code === 45;
  if (negative || code === 43) code = text.charCodeAt(++at);
  let digits = 0;
  let mantissa = 0;
  let scale = -1;
  for (; at < end; code = text.charCodeAt(++at)) {
    if (code >= 48 && code <= 57) {
      mantissa = mantissa * 10 + (code - 48);
      digits += 1;
      if (scale >= 0) scale += 1;
    } else if (code === 46 && scale < 0) {
      scale = 0;
    } else {
      return NaN;
    }
  }
  if (digits === 0 || digits > 15) return NaN;
  const value = scale > 0 ? mantissa / POWERS_OF_TEN[scale]! : mantissa;
  return negative ? -value : value;
}

/** formats.ts's NUMBER grammar, [+-]digits[.digits][e[+-]digits] (or .digits), checked in place. */
export function isDecimal(text: string, start: number, end: number): boolean {
  let at = start;
  let code = text.charCodeAt(at);
  if (code === 43 || code === 45) code = text.charCodeAt(++at);
  const integerStart = at;
  while (at < end && code >= 48 && code <= 57) code = text.charCodeAt(++at);
  let digits = at - integerStart;
  if (at < end && code === 46) {
    const fractionStart = ++at;
    code = text.charCodeAt(at);
    while (at < end && code >= 48 && code <= 57) code = text.charCodeAt(++at);
    digits += at - fractionStart;
  }
  if (digits === 0) return false;
  if (at < end && (code === 101 || code === 69)) {
    code = text.charCodeAt(++at);
    if (at < end && (code === 43 || code === 45)) code = text.charCodeAt(++at);
    const exponentStart = at;
    while (at < end && code >= 48 && code <= 57) code = text.charCodeAt(++at);
    if (at === exponentStart) return false;
  }
  return at === end;
}
