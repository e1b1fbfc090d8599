// The revenue rollup (workers/rollups/revenue.ts) against a model of it: generated check-outs as
// the revenue query prints them, summed per cell, currency and payment method in BigInt cents,
// and every figure compared with the reference's decimal (decimal-reference.ts).
import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import t from 'tap';
import { type Cell, type CheckOutRow, type RevenueRecord, rollupRevenue, runRollup } from '../../workers/rollups/index.js';
import { MAX_SAFE, roundText, textOfUnits } from './decimal-reference.js';
import { check } from './property.js';
import { perUnit } from './row-parts.js';

const DAYS = ['2025-03-01', '2025-03-02'];
const UNITS = [11, 12];
const OFF_PAGE_UNIT = 99;
const CURRENCIES = ['EUR', 'NGN', 'USD'];
const METHODS = ['CASH', 'OPAY', 'UPI', null];
const cells: Cell[] = DAYS.flatMap((day) => UNITS.map((unit) => ({ cooling_unit_id: unit, period_start: day, period_end: day })));

/** cooling_fees and discount as the query prints numeric(14, 2): always 2 decimals, discount <= fees. */
const amounts = (maxFees: bigint, minFees = 0n) =>
  fc
    .bigInt({ min: minFees, max: maxFees })
    .chain((fees) => fc.tuple(fc.constant(fees), fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: fees }))));

const checkOut = (maxFees: bigint, minFees = 0n): fc.Arbitrary<CheckOutRow> =>
  fc
    .tuple(
      fc.constantFrom(...DAYS),
      fc.constantFrom(...UNITS, OFF_PAGE_UNIT),
      fc.constantFrom(...CURRENCIES),
      amounts(maxFees, minFees),
      fc.boolean(),
      fc.constantFrom(...METHODS),
    )
    .map(([day, unit, currency, [fees, discount], paid, method]) => [
      day,
      unit,
      currency,
      textOfUnits(fees, 2),
      textOfUnits(discount, 2),
      paid,
      paid ? method : null,
    ]);

const rows = fc.oneof(
  // everyday pages: many small check-outs over every cell
  fc.array(checkOut(10_000_000n), { maxLength: 300 }),
  // numeric(14, 2) amounts near the top: around a hundred of them in one cell and currency pass 2^53 cents
  fc.array(
    checkOut(99_999_999_999_999n, 80_000_000_000_000n).map(([, , , ...rest]): CheckOutRow => [DAYS[0]!, UNITS[0]!, 'NGN', ...rest]),
    { minLength: 70, maxLength: 130 },
  ),
);

interface Sums {
  fees: bigint;
  discounts: bigint;
  paid: bigint;
  pending: bigint;
  paidCount: number;
  pendingCount: number;
}
const money = (cents: bigint) => Number(roundText(cents, 100n, 2));
const compare = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1);

/** The records straight from the definition (domain.md, "Revenue"), or 'too large' past exact Number cents. */
function reference(checkOuts: CheckOutRow[]): RevenueRecord[] | 'too large' {
  const cents = (text: string) => BigInt(text.replace('.', ''));
  let tooLarge = false;
  const records = cells.map((cell): RevenueRecord => {
    const mine = checkOuts.filter(([day, unit]) => day === cell.period_start && unit === cell.cooling_unit_id);
    const currencies = [...new Set(mine.map((row) => row[2]))].sort();
    const currency_totals = currencies.map((currency) => {
      const s: Sums = { fees: 0n, discounts: 0n, paid: 0n, pending: 0n, paidCount: 0, pendingCount: 0 };
      for (const [, , c, fees, discount, paid] of mine) {
        if (c !== currency) continue;
        s.fees += cents(fees);
        s.discounts += cents(discount);
        if (paid) {
          s.paid += cents(fees) - cents(discount);
          s.paidCount++;
        } else {
          s.pending += cents(fees) - cents(discount);
          s.pendingCount++;
        }
      }
      if (s.fees > MAX_SAFE || s.discounts > MAX_SAFE) tooLarge = true;
      return {
        currency,
        total_revenue: money(s.fees - s.discounts),
        paid_revenue: money(s.paid),
        pending_revenue: money(s.pending),
        cooling_fees: money(s.fees),
        discounts: money(s.discounts),
        check_outs: s.paidCount + s.pendingCount,
        paid_check_outs: s.paidCount,
        pending_check_outs: s.pendingCount,
      };
    });
    const methods = new Map<string, { payment_method: string | null; currency: string; cents: bigint; check_outs: number }>();
    for (const [, , currency, fees, discount, paid, method] of mine) {
      if (!paid) continue;
      const key = JSON.stringify([method, currency]);
      const m = methods.get(key) ?? { payment_method: method, currency, cents: 0n, check_outs: 0 };
      m.cents += cents(fees) - cents(discount);
      m.check_outs++;
      methods.set(key, m);
    }
    const payment_methods = [...methods.values()]
      .sort((a, b) => compare(a.payment_method, b.payment_method) || compare(a.currency, b.currency))
      .map((m) => ({ payment_method: m.payment_method, currency: m.currency, total_revenue: money(m.cents), check_outs: m.check_outs }));
    return { ...cell, check_outs: mine.length, currency_totals, payment_methods };
  });
  return tooLarge ? 'too large' : records;
}

t.test('revenue records equal the reference, to the cent, or are refused past 2^53 cents', async (t) => {
  let refused = 0;
  check(
    t,
    'rollupRevenue and runRollup against the reference',
    fc.property(rows, (checkOuts) => {
      const input = { cells, checkOuts: perUnit(checkOuts) };
      const expected = reference(checkOuts);
      if (expected === 'too large') {
        refused++;
        assert.throws(() => rollupRevenue(input), RangeError);
        return;
      }
      assert.deepStrictEqual(rollupRevenue(input), expected);
      // the serialised text: the same fields in the same order, every amount the exact decimal
      assert.equal(runRollup({ kind: 'revenue', input }), JSON.stringify(expected));
    }),
    400,
  );
  t.ok(refused > 0, `some pages passed 2^53 cents and were refused (${refused})`);
});
