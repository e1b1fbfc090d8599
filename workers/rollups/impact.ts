// The impact rollup: a page's crates, market surveys and farmers' baselines turned into kg checked
// in, food loss prevented, income increase, CO2 reduction and people served for each cell.
// Imports nothing of the project outside workers/ (see index.ts).
import { decimal, gcd, scaled } from './decimal.js';
import { type Cell, CellGrid, type ImpactInput, rowsOf } from './rows.js';

export interface ImpactRecord extends Cell {
  currency: string;
  kg_checked_in: number;
  food_loss_prevented_kg: number;
  market_loss_share: number | null;
  income_increase: number;
  co2_reduction_kg: number;
  farmers_served: number;
  community_served: number;
  market_surveys: number;
}

/** Average household size by country, in tenths of a person (domain.md, "Community served"). */
export const HOUSEHOLD_TENTHS: Record<string, number> = { NG: 47, IN: 44, PH: 42 };
const DEFAULT_HOUSEHOLD_TENTHS = 30;

const key = (periodStart: string, id: number) => `${periodStart}/${id}`;

interface Baseline {
  lossShare: bigint | null; // 10^-4
  currency: string | null;
  pricePerKg: bigint | null; // cents
}

interface ImpactSums {
  kgIn: bigint; // 10^-2 kg
  co2: bigint; // 10^-6 kg (kg 10^-2 x factor 10^-4)
  lost: bigint; // 10^-2 kg, from market surveys
  surveyed: bigint; // 10^-2 kg, sold + lost
  surveys: number;
  lossNumerator: bigint; // food loss prevented = lossNumerator / (10^6 surveyed)
  income: Map<bigint, bigint>; // by kg_per_unit k (10^-2): sum of (100 p - a k) s, over 10^4 k
  farmers: number;
}

export function rollupImpact(input: ImpactInput): ImpactRecord[] {
  const sums = new CellGrid<ImpactSums>(input.cells, () => ({
    kgIn: 0n,
    co2: 0n,
    lost: 0n,
    surveyed: 0n,
    surveys: 0,
    lossNumerator: 0n,
    income: new Map(),
    farmers: 0,
  }));
  const baselines = new Map<string, Baseline>();
  // each row set whole before the next (the parts of one in any order): crates need every survey of
  // their cell, surveys every baseline; a part is parsed only when its rows are folded in
  for (const [periodStart, unitId, farmerId, served, lossShare, currency, pricePerKg] of rowsOf(input.farmers)) {
    const cell = sums.get(periodStart, unitId);
    if (cell && served) cell.farmers++;
    baselines.set(key(periodStart, farmerId), {
      lossShare: lossShare === null ? null : scaled(lossShare, 4),
      currency,
      pricePerKg: pricePerKg === null ? null : scaled(pricePerKg, 2),
    });
  }

  // market surveys first: every crate needs its cell's loss share, kg lost / (kg sold + kg lost)
  for (const [periodStart, unitId, farmerId, currency, price, kgPerUnit, kgSold, kgLost] of rowsOf(input.surveys)) {
    const cell = sums.get(periodStart, unitId);
    if (!cell) continue;
    const sold = scaled(kgSold, 2);
    const lost = scaled(kgLost, 2);
    cell.surveys++;
    cell.lost += lost;
    cell.surveyed += sold + lost;
    const baseline = baselines.get(key(periodStart, farmerId));
    if (!baseline || baseline.pricePerKg === null || baseline.currency !== currency || currency !== input.currency) continue;
    // (p/k - a) x s with p the price in cents, k and s in hundredths of kg, a in cents per kg
    // = (100 p - a k) s / (10^4 k)
    const perUnit = scaled(kgPerUnit, 2);
    const term = (100n * scaled(price, 2) - baseline.pricePerKg * perUnit) * sold;
    cell.income.set(perUnit, (cell.income.get(perUnit) ?? 0n) + term);
  }

  for (const [periodStart, unitId, farmerId, kgText, factorWithout, factorWith] of rowsOf(input.crates)) {
    const cell = sums.get(periodStart, unitId);
    if (!cell) continue;
    const kg = scaled(kgText, 2);
    cell.kgIn += kg;
    cell.co2 += kg * (scaled(factorWithout, 4) - scaled(factorWith, 4));
    // no market survey in the cell: the loss after cooling is unknown, so nothing is claimed
    const lossShare = baselines.get(key(periodStart, farmerId))?.lossShare ?? null;
    if (cell.surveyed === 0n || lossShare === null) continue;
    // baseline b/10^4 - lost/surveyed = (b surveyed - lost 10^4) / (10^4 surveyed), not below 0
    const reduction = lossShare * cell.surveyed - cell.lost * 10_000n;
    if (reduction > 0n) cell.lossNumerator += kg * reduction;
  }

  const household = BigInt(HOUSEHOLD_TENTHS[input.country] ?? DEFAULT_HOUSEHOLD_TENTHS);
  return input.cells.map((cell) => {
    const s = sums.get(cell.period_start, cell.cooling_unit_id)!;
    const [incomeNumerator, incomeDenominator] = sumFractions(s.income);
    return {
      ...cell,
      currency: input.currency,
      kg_checked_in: decimal(s.kgIn, 100n),
      food_loss_prevented_kg: s.surveyed === 0n ? 0 : decimal(s.lossNumerator, 1_000_000n * s.surveyed),
      market_loss_share: s.surveyed === 0n ? null : decimal(s.lost, s.surveyed, 4),
      income_increase: decimal(incomeNumerator, incomeDenominator),
      co2_reduction_kg: decimal(s.co2, 1_000_000n),
      farmers_served: s.farmers,
      community_served: Number((BigInt(s.farmers) * household + 5n) / 10n),
      market_surveys: s.surveys,
    };
  });
}

/** The sum of numerator / (10^4 k) over the map's k, as one exact fraction in lowest terms. */
function sumFractions(byDenominator: Map<bigint, bigint>): [bigint, bigint] {
  let numerator = 0n;
  let denominator = 1n;
  for (const [perUnit, sum] of byDenominator) {
    const d = 10_000n * perUnit;
    numerator = numerator * d + sum * denominator;
    denominator *= d;
    const divisor = gcd(numerator < 0n ? -numerator : numerator, denominator);
    numerator /= divisor;
    denominator /= divisor;
  }
  return [numerator, denominator];
}
