// The impact rollup (workers/rollups/impact.ts) against the figures' definitions (docs/figures.md,
// "impact") worked in exact rationals (decimal-reference.ts) on generated crates,
// market surveys and baselines as the impact queries print them.
import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import t from 'tap';
import {
  type Cell,
  type CrateRow,
  type FarmerRow,
  type ImpactInput,
  type ImpactRecord,
  rollupImpact,
  runRollup,
  type SurveyRow,
} from '../../workers/rollups/index.js';
import { Ratio, textOfUnits, ZERO } from './decimal-reference.js';
import { check } from './property.js';
import { perUnit } from './row-parts.js';

const DAYS = ['2025-03-01', '2025-03-02'];
const UNITS = [11, 12];
const OFF_PAGE_UNIT = 99;
const FARMERS = [1, 2, 3, 4];
const COMPANY_CURRENCY = 'NGN';
const cells: Cell[] = DAYS.flatMap((day) => UNITS.map((unit) => ({ cooling_unit_id: unit, period_start: day, period_end: day })));

/** A numeric(p, s) column's text: `units` 10^-s, printed with s decimals. */
const column = (max: bigint, scale: number, min = 0n) => fc.bigInt({ min, max }).map((units) => textOfUnits(units, scale));
const place = fc.tuple(fc.constantFrom(...DAYS), fc.constantFrom(...UNITS, OFF_PAGE_UNIT), fc.constantFrom(...FARMERS));

const crate = fc
  .tuple(place, column(99_999_999n, 2, 1n), column(9_999_999n, 4), column(9_999_999n, 4))
  .map(([[day, unit, farmer], kg, without, withCooling]): CrateRow => [day, unit, farmer, kg, without, withCooling]);

const survey = fc
  .tuple(
    place,
    fc.constantFrom('NGN', 'NGN', 'USD'),
    column(999_999_999n, 2),
    fc.oneof(fc.constantFrom('1.00', '3.00', '0.33', '12.50'), column(99_999_999n, 2, 1n)),
    fc.oneof(fc.constant('0.00'), column(9_999_999n, 2)),
    fc.oneof(fc.constant('0.00'), column(999_999n, 2)),
  )
  .map(([[day, unit, farmer], currency, price, kgPerUnit, sold, lost]): SurveyRow => [
    day,
    unit,
    farmer,
    currency,
    price,
    kgPerUnit,
    sold,
    lost,
  ]);

/** The baseline of a farmer in a bucket: none, or a loss share numeric(5, 4) and a price per kg numeric(12, 2) in a currency. */
const baseline = fc.option(fc.tuple(column(10_000n, 4), fc.constantFrom('NGN', 'NGN', 'USD'), column(99_999_999n, 2)), { nil: null });

const page = fc.record({
  country: fc.constantFrom('NG', 'IN', 'PH', 'KE'),
  crates: fc.array(crate, { maxLength: 60 }),
  // check-outs in the bucket: their farmers are served whether or not a survey follows
  checkOuts: fc.array(place, { maxLength: 20 }),
  surveys: fc.array(survey, { maxLength: 30 }),
  baselines: fc.array(baseline, { minLength: DAYS.length * FARMERS.length, maxLength: DAYS.length * FARMERS.length }),
});
type Page = typeof page extends fc.Arbitrary<infer P> ? P : never;

const baselineOf = (p: Page, day: string, farmer: number) => p.baselines[DAYS.indexOf(day) * FARMERS.length + FARMERS.indexOf(farmer)]!;

/**
 * What the impact queries answer: one served farmer row per (bucket, unit, farmer) with a
 * check-in (a crate) or a check-out, and one not served per market survey's farmer (a survey
 * taken in the bucket may follow a check-out of an earlier one: its farmer needs a baseline).
 */
function inputOf(p: Page): ImpactInput {
  const rows = new Map<string, FarmerRow>();
  const add = ([day, unit, farmer]: [string, number, number, ...unknown[]], served: boolean) => {
    const b = baselineOf(p, day, farmer);
    rows.set(JSON.stringify([day, unit, farmer, served]), [day, unit, farmer, served, b?.[0] ?? null, b?.[1] ?? null, b?.[2] ?? null]);
  };
  for (const moved of [...p.crates, ...p.checkOuts]) add(moved, true);
  for (const surveyed of p.surveys) add(surveyed, false);
  return {
    cells,
    currency: COMPANY_CURRENCY,
    country: p.country,
    crates: perUnit(p.crates),
    surveys: perUnit(p.surveys),
    farmers: perUnit([...rows.values()]),
  };
}

const decimalText = (text: string) =>
  Ratio.of({ negative: text.startsWith('-'), integer: BigInt(text.replace('-', '').split('.')[0]!), fraction: text.split('.')[1] ?? '' });
const sum = (ratios: Ratio[]) => ratios.reduce((a, b) => a.plus(b), ZERO);
const HOUSEHOLD: Record<string, bigint> = { NG: 47n, IN: 44n, PH: 42n };

/** Every figure from its definition, in exact rationals, rounded half away from zero at the end. */
function reference(p: Page): ImpactRecord[] {
  return cells.map((cell) => {
    const here = <R extends [string, number, ...unknown[]]>(rows: R[]) =>
      rows.filter(([day, unit]) => day === cell.period_start && unit === cell.cooling_unit_id);
    const crates = here(p.crates);
    const surveys = here(p.surveys);
    const kg = sum(crates.map((c) => decimalText(c[3])));
    const co2 = sum(
      crates.map(([, , , kgText, without, withCooling]) => decimalText(kgText).times(decimalText(without).minus(decimalText(withCooling)))),
    );
    const lost = sum(surveys.map((s) => decimalText(s[7])));
    const surveyed = sum(surveys.map((s) => decimalText(s[6]).plus(decimalText(s[7]))));
    // loss share reported in the market surveys of the period, for the whole cell
    const reported = surveyed.isZero() ? null : lost.over(surveyed);
    // food loss prevented: kg checked in x (baseline loss share - reported loss share), not below 0, crate by crate
    const prevented =
      reported === null
        ? ZERO
        : sum(
            crates.map(([day, , farmer, kgText]) => {
              const b = baselineOf(p, day, farmer);
              if (b === null) return ZERO;
              const gain = decimalText(b[0]).minus(reported);
              return gain.isPositive() ? decimalText(kgText).times(gain) : ZERO;
            }),
          );
    // income increase: (selling price per kg - baseline price per kg) x kg sold, in the company's currency
    const income = sum(
      surveys.map(([day, , farmer, currency, price, kgPerUnit, sold]) => {
        const b = baselineOf(p, day, farmer);
        if (b === null || b[1] !== currency || currency !== COMPANY_CURRENCY) return ZERO;
        return decimalText(price).over(decimalText(kgPerUnit)).minus(decimalText(b[2])).times(decimalText(sold));
      }),
    );
    // farmers served: a check-in or a check-out at the unit in the bucket; a survey alone serves no one
    const farmers = new Set([...crates, ...here(p.checkOuts)].map((row) => row[2])).size;
    return {
      ...cell,
      currency: COMPANY_CURRENCY,
      kg_checked_in: Number(kg.round(2)),
      food_loss_prevented_kg: Number(prevented.round(2)),
      market_loss_share: reported === null ? null : Number(reported.round(4)),
      income_increase: Number(income.round(2)),
      co2_reduction_kg: Number(co2.round(2)),
      farmers_served: farmers,
      community_served: Number(new Ratio(BigInt(farmers) * (HOUSEHOLD[p.country] ?? 30n), 10n).round(0)),
      market_surveys: surveys.length,
    };
  });
}

t.test("impact records equal the figures' definitions worked in exact rationals", async (t) => {
  check(
    t,
    'rollupImpact and runRollup against the reference',
    fc.property(page, (p) => {
      const input = inputOf(p);
      const expected = reference(p);
      assert.deepStrictEqual(rollupImpact(input), expected);
      assert.equal(runRollup({ kind: 'impact', input }), JSON.stringify(expected));
    }),
    300,
  );
});

t.test('food loss prevented is claimed crate by crate, never below 0', async (t) => {
  // baseline loss 0.2 for farmer 1, 0.05 for farmer 2; the cell's surveys report 10 kg lost of 100
  const input: ImpactInput = {
    cells: cells.slice(0, 1),
    currency: 'NGN',
    country: 'NG',
    farmers: [
      JSON.stringify([
        [DAYS[0], UNITS[0], 1, true, '0.2000', 'NGN', '100.00'],
        [DAYS[0], UNITS[0], 2, true, '0.0500', 'NGN', '100.00'],
      ]),
    ],
    surveys: [JSON.stringify([[DAYS[0], UNITS[0], 1, 'NGN', '330.00', '3.00', '90.00', '10.00']])],
    crates: [
      JSON.stringify([
        [DAYS[0], UNITS[0], 1, '50.00', '0.5000', '0.1000'],
        [DAYS[0], UNITS[0], 2, '40.00', '0.3000', '0.2500'],
      ]),
    ],
  };
  const [record] = rollupImpact(input);
  t.equal(record!.food_loss_prevented_kg, 5); // 50 x (0.2 - 0.1); farmer 2's 40 x (0.05 - 0.1) is not subtracted
  t.equal(record!.market_loss_share, 0.1);
  t.equal(record!.income_increase, 900); // (330 / 3 - 100) x 90
  t.equal(record!.co2_reduction_kg, 22); // 50 x 0.4 + 40 x 0.05
  t.equal(record!.community_served, 9); // 2 x 4.7 = 9.4
});
