// Exact arithmetic on PostgreSQL's numeric text: parsed into integers at a column's scale, and
// only a final figure rounded (half away from zero, like numeric round()) into a JSON number.
// Imports nothing of the project outside workers/ (see index.ts).
//
// Every numeric column arrives as PostgreSQL's text, is parsed into an integer at its column's
// scale (money in cents, kg in hundredths, shares and factors in ten-thousandths; BigInt where
// products can pass 2^53, Number cents for revenue, see centsOf), and only the final figure is
// rounded and turned into a JSON number with at most 2 decimals (4 for a share). Ratios (loss
// shares, price per kg) stay fractions until that last division.

const TEN = [1n, 10n, 100n, 1_000n, 10_000n, 100_000n, 1_000_000n];

/** A numeric's text ("12.30", "7", "-0.5") as an integer count of 10^-scale units. */
export function scaled(text: string, scale: number): bigint {
  const dot = text.indexOf('.');
  if (dot < 0) return BigInt(text) * TEN[scale]!;
  const fraction = text.length - dot - 1;
  if (fraction > scale) throw new RangeError(`${text} has more than ${scale} decimals`);
  return BigInt(text.slice(0, dot) + text.slice(dot + 1)) * TEN[scale - fraction]!;
}

/** numerator/denominator rounded half away from zero to `decimals` places, as a JSON number. */
export function decimal(numerator: bigint, denominator = 1n, decimals = 2): number {
  if (denominator < 0n) [numerator, denominator] = [-numerator, -denominator];
  const negative = numerator < 0n;
  const magnitude = negative ? -numerator : numerator;
  const units = (magnitude * TEN[decimals]! * 2n + denominator) / (denominator * 2n);
  const digits = units.toString().padStart(decimals + 1, '0');
  const text = decimals === 0 ? digits : `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
  return negative && units !== 0n ? -Number(text) : Number(text);
}

/** Greatest common divisor of two non-negative integers; 1 for two zeros, so it always divides. */
export function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a === 0n ? 1n : a;
}

// ---- money in Number cents ----------------------------------------------------------------------
// The revenue rollup sums cents in plain Numbers, not BigInts (BigInt arithmetic cost most of a
// small page's CPU): exact while every figure stays a safe integer, which both ends check.

/** A numeric(_, 2)'s text ("12.30", "7") as integer cents: digits read in place, no substrings. */
export function centsOf(text: string): number {
  let cents = 0;
  let decimals = -1; // digits after the point; -1 before it
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 46 && decimals < 0) {
      decimals = 0;
    } else if (code >= 48 && code <= 57) {
      cents = cents * 10 + (code - 48);
      if (decimals >= 0 && ++decimals > 2) throw new RangeError(`${text} has more than 2 decimals`);
    } else {
      throw new RangeError(`${JSON.stringify(text)} is not an amount of money`);
    }
  }
  if (text.length === 0 || text === '.') throw new RangeError('an empty amount of money');
  cents *= decimals === 2 ? 1 : decimals === 1 ? 10 : 100;
  if (!Number.isSafeInteger(cents)) throw new RangeError(`${text} is beyond exact arithmetic`);
  return cents;
}

/**
 * Integer cents as a JSON number with at most 2 decimals. Division is correctly rounded, so
 * cents / 100 is the double nearest the exact amount: the very number Number("12.30") gives.
 */
export function centsToNumber(cents: number): number {
  if (!Number.isSafeInteger(cents)) throw new RangeError(`a sum of ${cents} cents is beyond exact arithmetic`);
  return cents / 100;
}
