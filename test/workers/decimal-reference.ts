// An independent decimal reference for the rollups' tests, sharing no code with workers/rollups/:
// numerics are modelled as their parts (sign, integer digits, fraction digits), fractions are
// exact rationals, and rounding is schoolbook long division on digit strings with a carry, the
// way PostgreSQL's round(numeric, n) is defined (half away from zero). decimal.test.ts checks the
// reference itself against PostgreSQL.
import fc from 'fast-check';

export const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

const pow10 = (n: number) => 10n ** BigInt(n);
const abs = (n: bigint) => (n < 0n ? -n : n);

/** A numeric as PostgreSQL holds it: its text is `-`? integer `.` fraction (fraction digits kept as printed). */
export interface Numeric {
  negative: boolean;
  integer: bigint;
  fraction: string;
}

/** The text PostgreSQL prints: no exponent, the fraction's digits as stored, never "-0". */
export function textOf(n: Numeric): string {
  return `${n.negative ? '-' : ''}${n.integer}${n.fraction === '' ? '' : `.${n.fraction}`}`;
}

/** The numeric's exact value in 10^-scale units (the fraction must have at most `scale` digits). */
export function unitsOf(n: Numeric, scale: number): bigint {
  if (n.fraction.length > scale) throw new Error(`reference: ${textOf(n)} has more than ${scale} decimals`);
  const fraction = n.fraction === '' ? 0n : BigInt(n.fraction) * pow10(scale - n.fraction.length);
  const magnitude = n.integer * pow10(scale) + fraction;
  return n.negative ? -magnitude : magnitude;
}

/** `units` 10^-decimals as text with exactly `decimals` decimals (what numeric(_, decimals) prints). */
export function textOfUnits(units: bigint, decimals: number): string {
  const digits = abs(units)
    .toString()
    .padStart(decimals + 1, '0');
  const point = digits.length - decimals;
  return `${units < 0n ? '-' : ''}${digits.slice(0, point)}${decimals === 0 ? '' : `.${digits.slice(point)}`}`;
}

/** A decimal digit string plus one, with the carry rippling left ("0999" -> "1000", "99" -> "100"). */
function increment(digits: string): string {
  const out = digits.split('');
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i] !== '9') {
      out[i] = String(Number(out[i]) + 1);
      return out.join('');
    }
    out[i] = '0';
  }
  return `1${out.join('')}`;
}

/**
 * p/q rounded half away from zero to `decimals` places, as PostgreSQL's round() prints it: long
 * division one digit past the last kept, and a digit 5..9 there rounds the magnitude up (the rest
 * is then at least half a unit of the last place). Never "-0".
 */
export function roundText(p: bigint, q: bigint, decimals: number): string {
  if (q === 0n) throw new Error('reference: division by zero');
  const negative = p < 0n !== q < 0n;
  const a = abs(p);
  const b = abs(q);
  let remainder = a % b;
  let digits = (a / b).toString();
  let next = 0n;
  for (let i = 0; i <= decimals; i++) {
    remainder *= 10n;
    const digit = remainder / b;
    remainder %= b;
    if (i < decimals) digits += digit.toString();
    else next = digit;
  }
  if (next >= 5n) digits = increment(digits);
  const point = digits.length - decimals;
  const zero = /^0*$/.test(digits);
  return `${negative && !zero ? '-' : ''}${digits.slice(0, point)}${decimals === 0 ? '' : `.${digits.slice(point)}`}`;
}

/** A decimal text the way a JavaScript number prints when it can hold it: no trailing zeros, no "-0". */
export function jsonText(text: string): string {
  const trimmed = text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
  return trimmed === '-0' ? '0' : trimmed;
}

/** Significant digits of a decimal text: up to 15 a double holds, and prints, exactly. */
export const significantDigits = (text: string) => text.replace('-', '').replace('.', '').replace(/^0+/, '').length;

/** Digits after the point of a number as JavaScript prints it (no exponent form expected). */
export function printedDecimals(value: number): number {
  const text = String(value);
  if (/e/i.test(text)) throw new Error(`reference: ${text} printed in exponent form`);
  const dot = text.indexOf('.');
  return dot < 0 ? 0 : text.length - dot - 1;
}

// ---- exact rationals --------------------------------------------------------------------------

function gcdOf(a: bigint, b: bigint): bigint {
  a = abs(a);
  b = abs(b);
  while (b > 0n) {
    const r = a % b;
    a = b;
    b = r;
  }
  return a;
}

/** n/d with d > 0, in lowest terms. */
export class Ratio {
  readonly n: bigint;
  readonly d: bigint;

  constructor(n: bigint, d = 1n) {
    if (d === 0n) throw new Error('reference: zero denominator');
    if (d < 0n) [n, d] = [-n, -d];
    const g = gcdOf(n, d) || 1n;
    this.n = n / g;
    this.d = d / g;
  }

  static of(n: Numeric): Ratio {
    return new Ratio(unitsOf(n, n.fraction.length), pow10(n.fraction.length));
  }

  plus(o: Ratio): Ratio {
    return new Ratio(this.n * o.d + o.n * this.d, this.d * o.d);
  }
  minus(o: Ratio): Ratio {
    return new Ratio(this.n * o.d - o.n * this.d, this.d * o.d);
  }
  times(o: Ratio): Ratio {
    return new Ratio(this.n * o.n, this.d * o.d);
  }
  over(o: Ratio): Ratio {
    return new Ratio(this.n * o.d, this.d * o.n);
  }
  isPositive(): boolean {
    return this.n > 0n;
  }
  isZero(): boolean {
    return this.n === 0n;
  }
  round(decimals: number): string {
    return roundText(this.n, this.d, decimals);
  }
}

export const ZERO = new Ratio(0n);

// ---- generators -------------------------------------------------------------------------------

/** A digit string of exactly `length` digits. */
export const digitsOf = (length: number) =>
  length === 0 ? fc.constant('') : fc.bigInt({ min: 0n, max: pow10(length) - 1n }).map((v) => v.toString().padStart(length, '0'));

/** Integer parts: small, numeric(12,2)'s, numeric(14,2)'s, around 2^53 cents, and far beyond. */
export const integerPart = fc.oneof(
  fc.bigInt({ min: 0n, max: 999n }),
  fc.bigInt({ min: 0n, max: pow10(10) - 1n }),
  fc.bigInt({ min: 0n, max: pow10(12) - 1n }),
  fc.bigInt({ min: MAX_SAFE / 100n - 2000n, max: MAX_SAFE / 100n + 2000n }),
  fc.bigInt({ min: 0n, max: pow10(30) }),
);

/**
 * Numeric texts as PostgreSQL prints them: `minDecimals`..`maxDecimals` fraction digits (a
 * numeric(p, s) column always prints s of them; a bare numeric as many as it holds), negative
 * only when `negative` is allowed and the value is not zero (PostgreSQL has no -0).
 */
export function numeric(options: {
  minDecimals?: number;
  maxDecimals: number;
  negative?: boolean;
  integer?: fc.Arbitrary<bigint>;
  fraction?: (length: number) => fc.Arbitrary<string>;
}): fc.Arbitrary<Numeric> {
  const fraction = options.fraction ?? digitsOf;
  return fc
    .record({
      negative: options.negative ? fc.boolean() : fc.constant(false),
      integer: options.integer ?? integerPart,
      fraction: fc.integer({ min: options.minDecimals ?? 0, max: options.maxDecimals }).chain(fraction),
    })
    .map((n) => ({ ...n, negative: n.negative && (n.integer !== 0n || /[1-9]/.test(n.fraction)) }));
}

/** Fraction digits that often end in 5, so ties of round() come up as often as anything else. */
export const tieProne = (length: number): fc.Arbitrary<string> =>
  length === 0
    ? fc.constant('')
    : fc.oneof(
        digitsOf(length),
        digitsOf(length - 1).map((d) => `${d}5`),
        digitsOf(length - 1).map((d) => `${d}0`),
      );
