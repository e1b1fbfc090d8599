// The rollups' exact arithmetic (workers/rollups/decimal.ts) against an independent decimal
// reference (decimal-reference.ts) on generated numeric texts, and the reference and the code
// against PostgreSQL's own round() and sum() on a sample.
import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import t from 'tap';
import { centsOf, centsToNumber, decimal, gcd, scaled } from '../../workers/rollups/decimal.js';
import { withAdmin } from '../helpers/db.js';
import {
  digitsOf,
  jsonText,
  MAX_SAFE,
  type Numeric,
  numeric,
  printedDecimals,
  roundText,
  significantDigits,
  textOf,
  textOfUnits,
  tieProne,
  unitsOf,
} from './decimal-reference.js';
import { check } from './property.js';

const RUNS = 2_000;
const pow10 = (n: number) => 10n ** BigInt(n);
const isRangeError = (error: unknown) => error instanceof RangeError;

/** The number `decimal` must give for p/q: the double nearest the reference's rounded decimal. */
function expectDecimal(actual: number, p: bigint, q: bigint, decimals: number) {
  const reference = roundText(p, q, decimals);
  assert.equal(actual, Number(reference), `${p}/${q} at ${decimals}: ${actual}, not ${reference}`);
  assert.ok(!Object.is(actual, -0), `${p}/${q} gave -0`);
  if (Math.abs(actual) < 1e21) assert.ok(printedDecimals(actual) <= decimals, `${actual} prints more than ${decimals} decimals`);
  // up to 15 significant digits a double holds the decimal exactly: the JSON text is the reference's
  if (significantDigits(reference) <= 15) assert.equal(String(actual), jsonText(reference));
}

t.test('golden examples: numeric text rounded half away from zero, as decimal text and never as a float', async (t) => {
  const round = (text: string, decimals = 2) => decimal(scaled(text, 6), 1_000_000n, decimals);
  t.equal(round('0.005'), 0.01);
  t.equal(round('-0.005'), -0.01);
  t.equal(round('2.675'), 2.68); // the double 2.675 is 2.67499999..., toFixed(2) says 2.67
  t.equal(round('-2.675'), -2.68);
  t.equal(round('1.005'), 1.01); // Math.round(1.005 * 100) / 100 is 1
  t.equal(round('0.125'), 0.13); // banker's rounding would give 0.12
  t.equal(round('0.135'), 0.14);
  t.equal(round('0.0049'), 0);
  t.ok(Object.is(round('-0.0049'), 0), 'a negative that rounds to zero is 0, not -0 (PostgreSQL prints 0.00)');
  t.equal(round('99999999999.995'), 100_000_000_000); // the carry runs through every digit
  t.equal(round('0.00005', 4), 0.0001);
  t.equal(round('-0.00005', 4), -0.0001);
  t.equal(round('2.5', 0), 3);
  t.equal(round('-2.5', 0), -3);
  t.equal(round('0.5', 0), 1);
  t.equal(round('7', 2), 7);
  t.equal(decimal(1n, 3n), 0.33);
  t.equal(decimal(2n, 3n), 0.67);
  t.equal(decimal(-2n, 3n), -0.67);
  t.equal(decimal(2n, -3n), -0.67);
  t.equal(decimal(-2n, -3n), 0.67);
  t.equal(decimal(1n, 8n, 2), 0.13); // 0.125
  t.equal(decimal(1n, 8n, 4), 0.125);
  t.equal(centsOf('0.00'), 0);
  t.equal(centsOf('0.05'), 5);
  t.equal(centsOf('90071992547409.91'), Number.MAX_SAFE_INTEGER);
  t.throws(() => centsOf('90071992547409.92'), RangeError);
  t.throws(() => centsOf('-1.00'), RangeError);
  t.throws(() => centsOf(''), RangeError);
  t.throws(() => centsOf('.'), RangeError);
  t.throws(() => centsOf('1.2.3'), RangeError);
  t.equal(centsToNumber(2675), 26.75);
  t.equal(centsToNumber(-5), -0.05);
  t.equal(gcd(0n, 0n), 1n);
  t.equal(gcd(12n, 18n), 6n);
});

t.test('the reference agrees with the golden examples too', async (t) => {
  t.equal(roundText(2675n, 1000n, 2), '2.68');
  t.equal(roundText(-5n, 1000n, 2), '-0.01');
  t.equal(roundText(-4n, 1000n, 2), '0.00');
  t.equal(roundText(99_999_999_999_995n, 1000n, 2), '100000000000.00');
  t.equal(roundText(-25n, 10n, 0), '-3');
  t.equal(textOfUnits(-5n, 2), '-0.05');
});

t.test('a numeric text parses exactly at its scale', async (t) => {
  check(
    t,
    'scaled(text, s) is the exact count of 10^-s units',
    fc.property(
      fc.integer({ min: 0, max: 6 }).chain((scale) => fc.tuple(fc.constant(scale), numeric({ maxDecimals: scale, negative: true }))),
      ([scale, n]) => assert.equal(scaled(textOf(n), scale), unitsOf(n, scale)),
    ),
    RUNS,
  );
  check(
    t,
    'scaled refuses a text with more decimals than its scale',
    fc.property(
      fc
        .integer({ min: 0, max: 5 })
        .chain((scale) => fc.tuple(fc.constant(scale), numeric({ minDecimals: scale + 1, maxDecimals: 6, negative: true }))),
      ([scale, n]) => assert.throws(() => scaled(textOf(n), scale), isRangeError),
    ),
    RUNS,
  );
});

t.test('money parses into exact Number cents, or is refused', async (t) => {
  check(
    t,
    'centsOf is the exact cents while they are a safe integer, a RangeError beyond',
    fc.property(numeric({ maxDecimals: 2 }), (n) => {
      const cents = unitsOf(n, 2);
      if (cents > MAX_SAFE) assert.throws(() => centsOf(textOf(n)), isRangeError);
      else assert.equal(centsOf(textOf(n)), Number(cents));
    }),
    RUNS,
  );
  check(
    t,
    'centsOf agrees with scaled(text, 2) on every amount it accepts',
    fc.property(
      numeric({ minDecimals: 2, maxDecimals: 2, integer: fc.bigInt({ min: 0n, max: MAX_SAFE / 100n }) }).filter(
        (n) => unitsOf(n, 2) <= MAX_SAFE,
      ),
      (n) => assert.equal(BigInt(centsOf(textOf(n))), scaled(textOf(n), 2)),
    ),
    RUNS,
  );
  check(
    t,
    'centsOf refuses negative amounts and more than 2 decimals',
    fc.property(
      fc.oneof(
        numeric({ maxDecimals: 2, negative: true }).filter((n) => n.negative),
        numeric({ minDecimals: 3, maxDecimals: 6 }),
      ),
      (n) => assert.throws(() => centsOf(textOf(n)), isRangeError),
    ),
    RUNS,
  );
});

t.test('decimal(p, q, n) is p/q rounded half away from zero to n places', async (t) => {
  const numerator = fc.oneof(
    fc.bigInt({ min: -10_000n, max: 10_000n }),
    fc.bigInt({ min: -MAX_SAFE - 1000n, max: -MAX_SAFE + 1000n }),
    fc.bigInt({ min: MAX_SAFE - 1000n, max: MAX_SAFE + 1000n }),
    fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }),
    fc.bigInt({ min: -pow10(24), max: pow10(24) }),
  );
  const denominator = fc
    .oneof(
      fc.bigInt({ min: 1n, max: 1000n }),
      fc.constantFrom(100n, 10_000n, 1_000_000n, 2n, 8n, 200n),
      fc.bigInt({ min: 1n, max: 2n ** 80n }),
    )
    .chain((d) => fc.constantFrom(d, -d));
  check(
    t,
    'any fraction, any sign, 0 to 6 places',
    fc.property(numerator, denominator, fc.integer({ min: 0, max: 6 }), (p, q, decimals) =>
      expectDecimal(decimal(p, q, decimals), p, q, decimals),
    ),
    5_000,
  );
  check(
    t,
    'an exact half rounds away from zero, a hair below it towards zero',
    fc.property(fc.bigInt({ min: 0n, max: pow10(20) }), fc.integer({ min: 0, max: 6 }), fc.boolean(), (k, decimals, negative) => {
      const sign = negative ? -1n : 1n;
      // (k + 1/2) / 10^n: exactly half a unit of the last place
      assert.equal(decimal(sign * (2n * k + 1n), 2n * pow10(decimals), decimals), Number(textOfUnits(sign * (k + 1n), decimals)));
      // (k + 1/2 - 10^-9) / 10^n: just under the half
      const below = decimal(sign * ((2n * k + 1n) * pow10(9) - 2n), 2n * pow10(decimals + 9), decimals);
      assert.equal(below, k === 0n ? 0 : Number(textOfUnits(sign * k, decimals)));
      assert.ok(!Object.is(below, -0));
    }),
    RUNS,
  );
  check(
    t,
    "a numeric text rounded to fewer places is PostgreSQL's round(numeric, n) of it",
    fc.property(numeric({ maxDecimals: 6, negative: true, fraction: tieProne }), fc.integer({ min: 0, max: 4 }), (n, decimals) => {
      const units = unitsOf(n, 6);
      assert.equal(scaled(textOf(n), 6), units);
      expectDecimal(decimal(scaled(textOf(n), 6), pow10(6), decimals), units, pow10(6), decimals);
    }),
    RUNS,
  );
});

t.test('cents print as the exact amount', async (t) => {
  check(
    t,
    'centsToNumber(c) is the double nearest c/100, with at most 2 decimals',
    fc.property(
      fc.oneof(
        fc.maxSafeInteger(),
        fc.integer({ min: -1_000_000, max: 1_000_000 }),
        fc.bigInt({ min: MAX_SAFE - 100_000n, max: MAX_SAFE }).map(Number),
      ),
      (cents) => {
        const value = centsToNumber(cents);
        const reference = roundText(BigInt(cents), 100n, 2);
        assert.equal(value, Number(reference));
        assert.ok(printedDecimals(value) <= 2);
        // below 2^46 money units a double is finer than a cent, so the JSON text is the exact amount
        // (above it, up to 2^53 cents, neighbouring cents can share a double)
        if (Math.abs(cents) < 2 ** 46 * 100) assert.equal(String(value), jsonText(reference));
      },
    ),
    RUNS,
  );
  check(
    t,
    'centsToNumber refuses what is not a safe integer count of cents',
    fc.property(
      fc.oneof(
        fc.bigInt({ min: MAX_SAFE + 1n, max: 2n ** 70n }).map(Number),
        fc.bigInt({ min: MAX_SAFE + 1n, max: 2n ** 70n }).map((c) => -Number(c)),
        fc.double({ noInteger: true, noNaN: true }),
      ),
      (cents) => assert.throws(() => centsToNumber(cents), isRangeError),
    ),
    RUNS,
  );
});

t.test('sums of many amounts equal the reference sum', async (t) => {
  const money = (max: bigint) => numeric({ minDecimals: 2, maxDecimals: 2, integer: fc.bigInt({ min: 0n, max }) });
  // numeric(14, 2) amounts: a hundred near the top pass 2^53 cents
  const amounts = fc.oneof(
    fc.array(money(pow10(10) - 1n), { maxLength: 400 }),
    fc.array(money(pow10(12) - 1n), { minLength: 60, maxLength: 140 }),
  );
  check(
    t,
    'Number cents summed: the exact total, or a RangeError once it passes 2^53 cents',
    fc.property(amounts, (list) => {
      let sum = 0;
      for (const n of list) sum += centsOf(textOf(n));
      const exact = list.reduce((total, n) => total + unitsOf(n, 2), 0n);
      if (exact > MAX_SAFE) assert.throws(() => centsToNumber(sum), isRangeError);
      else assert.equal(centsToNumber(sum), Number(roundText(exact, 100n, 2)));
    }),
    500,
  );
  check(
    t,
    'BigInt units summed: signed amounts of any size, exact to the last unit',
    fc.property(
      fc
        .integer({ min: 0, max: 4 })
        .chain((scale) => fc.tuple(fc.constant(scale), fc.array(numeric({ maxDecimals: scale, negative: true }), { maxLength: 200 }))),
      ([scale, list]) => {
        const sum = list.reduce((total, n) => total + scaled(textOf(n), scale), 0n);
        const exact = list.reduce((total, n) => total + unitsOf(n, scale), 0n);
        assert.equal(sum, exact);
        expectDecimal(decimal(sum, pow10(scale), Math.min(scale, 2)), exact, pow10(scale), Math.min(scale, 2));
      },
    ),
    500,
  );
});

t.test('PostgreSQL agrees: its text, round() and sum() against the reference and the code', async (t) => {
  const sample = (arbitrary: fc.Arbitrary<Numeric>, numRuns: number, seed: number) => fc.sample(arbitrary, { numRuns, seed }).map(textOf);
  const goldens = [
    '0.005',
    '-0.005',
    '2.675',
    '-2.675',
    '1.005',
    '0.125',
    '-0.0049',
    '99999999999.995',
    '0.00005',
    '2.5',
    '-2.5',
    '0',
    '7',
  ];
  const values = [...goldens, ...sample(numeric({ maxDecimals: 6, negative: true, fraction: tieProne }), 300, 20_250_301)];
  const amounts = sample(
    numeric({ minDecimals: 2, maxDecimals: 2, negative: true, integer: fc.bigInt({ min: 0n, max: pow10(12) - 1n }) }),
    200,
    7,
  );
  const { rows } = await withAdmin((client) =>
    client.query<{ results: [string, string, string, string, string][]; sum: string }>(
      `SELECT (SELECT json_agg(json_build_array(v, v::numeric::text, round(v::numeric, 0)::text, round(v::numeric, 2)::text,
                                             round(v::numeric, 4)::text) ORDER BY i)
               FROM unnest($1::text[]) WITH ORDINALITY AS x (v, i)) AS results,
            (SELECT sum(v::numeric)::text FROM unnest($2::text[]) AS y (v)) AS sum`,
      [values, amounts],
    ),
  );
  const { results, sum } = rows[0]!;
  t.equal(results.length, values.length);
  let mismatches = 0;
  for (const [text, printed, r0, r2, r4] of results) {
    const units = scaled(text, 6);
    const expected = {
      printed: text,
      r0: roundText(units, pow10(6), 0),
      r2: roundText(units, pow10(6), 2),
      r4: roundText(units, pow10(6), 4),
    };
    const actual = { printed, r0, r2, r4 };
    const code = { r0: decimal(units, pow10(6), 0), r2: decimal(units, pow10(6), 2), r4: decimal(units, pow10(6), 4) };
    const ours = { r0: Number(r0), r2: Number(r2), r4: Number(r4) };
    // the generator prints what PostgreSQL prints, the reference rounds as round() does, and so does the code
    if (JSON.stringify(actual) !== JSON.stringify(expected) || JSON.stringify(code) !== JSON.stringify(ours)) {
      mismatches++;
      t.fail(`${text}: PostgreSQL ${JSON.stringify(actual)}, reference ${JSON.stringify(expected)}, decimal() ${JSON.stringify(code)}`);
    }
  }
  t.equal(mismatches, 0, `${results.length} values: PostgreSQL's text and round() at 0, 2 and 4 places`);
  const total = amounts.reduce((s, a) => s + scaled(a, 2), 0n);
  t.equal(sum, textOfUnits(total, 2), `sum() of ${amounts.length} amounts`);
  t.equal(decimal(total, 100n), Number(sum));
});

t.test('the digit generator makes exactly the digits asked for', async (t) => {
  for (const text of fc.sample(digitsOf(5), 50)) t.match(text, /^\d{5}$/);
});
