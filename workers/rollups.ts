// Turns a page's raw rows (one per check-out, crate, market survey, farmer) into revenue and
// impact records with exact arithmetic. Pure functions of plain data: run on a rollup thread
// (workers/rollup-thread.ts) or inline on the main thread (src/analytics/rollups.ts). Imports
// nothing of the project: under tsx on Node 20 a worker thread can only load it through tsx's
// require hook.
//
// Exactness: every numeric column arrives as PostgreSQL's text, is parsed into an integer at its
// column's scale (money in cents, kg in hundredths, shares and factors in ten-thousandths; BigInt
// where products can pass 2^53, Number cents for revenue, see below), and only the final figure
// is rounded (half away from zero, like numeric round()) and turned into a JSON number with at
// most 2 decimals (4 for a share). Ratios (loss shares, price per kg) stay fractions until that
// last division.
import fastJson, { type Schema } from 'fast-json-stringify';


/**
 * JSON text of a T. Rows arrive as one (PostgreSQL's json_agg of json_build_array, in the column
 * order of the row types below) and records leave as one: a single string crosses between the
 * event loop and the worker each way, never thousands of objects to clone.
 */
export type Json<T> = string & { readonly jsonOf?: T };

export const parseJson = <T>(json: Json<T>): T => JSON.parse(json) as T;

export interface Cell {
  cooling_unit_id: number;
  period_start: string;
  period_end: string;
}

export type CheckOutRow = [periodStart: string, unitId: number, currency: string, coolingFees: string, discount: string,
  paid: boolean, paymentMethod: string | null];
export type CrateRow = [periodStart: string, unitId: number, farmerId: number, kg: string, factorWithout: string, factorWith: string];
export type SurveyRow = [periodStart: string, unitId: number, farmerId: number, currency: string, sellingPricePerUnit: string,
  kgPerUnit: string, kgSold: string, kgLost: string];
/** one per distinct (bucket, unit, farmer) with a movement, with the farmer's baseline for the bucket */
export type FarmerRow = [periodStart: string, unitId: number, farmerId: number, lossShare: string | null,
  baselineCurrency: string | null, baselinePricePerKg: string | null];

export interface RevenueInput {
  cells: Cell[];
  checkOuts: Json<CheckOutRow[]>;
}

export interface ImpactInput {
  cells: Cell[];
  /** the company's currency (income_increase is in it) and country (household size) */
  currency: string;
  country: string;
  crates: Json<CrateRow[]>;
  surveys: Json<SurveyRow[]>;
  farmers: Json<FarmerRow[]>;
}

export interface CurrencyTotal {
  currency: string;
  total_revenue: number; paid_revenue: number; pending_revenue: number; cooling_fees: number; discounts: number;
  check_outs: number; paid_check_outs: number; pending_check_outs: number;
}

export interface PaymentMethodTotal { payment_method: string | null; currency: string; total_revenue: number; check_outs: number }

export interface RevenueRecord extends Cell {
  check_outs: number;
  currency_totals: CurrencyTotal[];
  payment_methods: PaymentMethodTotal[];
}

export interface ImpactRecord extends Cell {
  currency: string;
  kg_checked_in: number; food_loss_prevented_kg: number; market_loss_share: number | null; income_increase: number;
  co2_reduction_kg: number; farmers_served: number; community_served: number; market_surveys: number;
}

/** Average household size by country, in tenths of a person (domain.md, "Community served"). */
export const HOUSEHOLD_TENTHS: Record<string, number> = { NG: 47, IN: 44, PH: 42 };
const DEFAULT_HOUSEHOLD_TENTHS = 30;

export type RollupTask = { kind: 'revenue'; input: RevenueInput } | { kind: 'impact'; input: ImpactInput };

/** The records of a task as JSON text. */
export function runRollup(task: RollupTask): Json<RevenueRecord[] | ImpactRecord[]> {
  return task.kind === 'revenue' ? serializeRevenue(rollupRevenue(task.input)) : serializeImpact(rollupImpact(task.input));
}

// ---- serialization ----------------------------------------------------------------------------
// fast-json-stringify from a schema of the records: ~3x JSON.stringify on these fixed shapes,
// the largest cost of a small page after the query. Every property is listed, in the order the
// rollups build the records (the routes' zod schemas document the same fields), and required, so
// the output is JSON.stringify's byte for byte (test/analytics/rollups.test.ts compares them).

const integer = { type: 'integer' } as const;
const number = { type: 'number' } as const;
const string = { type: 'string' } as const;
const nullable = <T extends { type: string }>(schema: T) => ({ type: [schema.type, 'null'] });
const objectOf = (properties: Record<string, unknown>) => ({ type: 'object', properties, required: Object.keys(properties) });

const cellProperties = { cooling_unit_id: integer, period_start: string, period_end: string };

const serializeRevenue = fastJson({
  type: 'array',
  items: objectOf({
    ...cellProperties,
    check_outs: integer,
    currency_totals: {
      type: 'array',
      items: objectOf({
        currency: string, total_revenue: number, paid_revenue: number, pending_revenue: number, cooling_fees: number,
        discounts: number, check_outs: integer, paid_check_outs: integer, pending_check_outs: integer,
      }),
    },
    payment_methods: {
      type: 'array',
      items: objectOf({ payment_method: nullable(string), currency: string, total_revenue: number, check_outs: integer }),
    },
  }),
} as Schema) as (records: RevenueRecord[]) => string;

const serializeImpact = fastJson({
  type: 'array',
  items: objectOf({
    ...cellProperties,
    currency: string, kg_checked_in: number, food_loss_prevented_kg: number, market_loss_share: nullable(number),
    income_increase: number, co2_reduction_kg: number, farmers_served: integer, community_served: integer, market_surveys: integer,
  }),
} as Schema) as (records: ImpactRecord[]) => string;

/** A query answering one row whose `rows` column is the JSON text of a row set (sql/queries/). */
export interface RowsQuery {
  text: string;
  values: unknown[];
}

/** A page to roll up, with the queries of its rows rather than the rows: see rollup-thread.ts. */
export type RollupRequest =
  | { kind: 'revenue'; cells: Cell[]; checkOuts: RowsQuery }
  | { kind: 'impact'; cells: Cell[]; currency: string; country: string; crates: RowsQuery; surveys: RowsQuery; farmers: RowsQuery };

/** Runs a request's queries through `rowsOf` (the thread's pool, or the main one inline) and rolls the rows up. */
export async function rollUpFrom(request: RollupRequest, rowsOf: (query: RowsQuery) => Promise<string>): Promise<string> {
  if (request.kind === 'revenue') {
    return runRollup({ kind: 'revenue', input: { cells: request.cells, checkOuts: await rowsOf(request.checkOuts) } });
  }
  const [crates, surveys, farmers] = await Promise.all([rowsOf(request.crates), rowsOf(request.surveys), rowsOf(request.farmers)]);
  const { cells, currency, country } = request;
  return runRollup({ kind: 'impact', input: { cells, currency, country, crates, surveys, farmers } });
}

// ---- exact decimals ---------------------------------------------------------------------------

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

const key = (periodStart: string, id: number) => `${periodStart}/${id}`;
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const nullsLast = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : byText(a, b));

/**
 * Per-cell state, found by period and unit: nested maps rather than one map keyed by a
 * "period/unit" string, which cost a string built and hashed for every row.
 */
class CellGrid<T> {
  private readonly periods = new Map<string, Map<number, T>>();

  constructor(cells: Cell[], create: () => T) {
    for (const cell of cells) {
      let units = this.periods.get(cell.period_start);
      if (!units) this.periods.set(cell.period_start, (units = new Map()));
      units.set(cell.cooling_unit_id, create());
    }
  }

  /** undefined for a bucket x unit of the query that is not on this page */
  get(periodStart: string, unitId: number): T | undefined {
    return this.periods.get(periodStart)?.get(unitId);
  }
}

// ---- revenue ----------------------------------------------------------------------------------
// Money here is integer cents in plain Numbers, not BigInts: cooling_fees and discount are
// numeric(14, 2) and never negative, so every amount is below 10^14 cents and every sum of them
// is exact while it stays below 2^53 (checked once, on output: with no negative addend, a final
// sum in range means every partial sum was). BigInt arithmetic cost most of a small page's CPU.

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

interface CurrencySums { fees: number; discounts: number; paid: number; pending: number; paidCount: number; pendingCount: number }
interface MethodSums { method: string | null; currency: string; revenue: number; count: number }

export function rollupRevenue(input: RevenueInput): RevenueRecord[] {
  const sums = new CellGrid(input.cells, () => ({ currencies: new Map<string, CurrencySums>(), methods: new Map<string, MethodSums>() }));
  for (const [periodStart, unitId, currency, coolingFees, discountText, paid, method] of parseJson(input.checkOuts)) {
    const cell = sums.get(periodStart, unitId);
    if (!cell) continue; // a bucket x unit of the query that is not on this page
    const fees = centsOf(coolingFees);
    const discount = centsOf(discountText);
    let total = cell.currencies.get(currency);
    if (!total) cell.currencies.set(currency, (total = { fees: 0, discounts: 0, paid: 0, pending: 0, paidCount: 0, pendingCount: 0 }));
    total.fees += fees;
    total.discounts += discount;
    if (!paid) {
      total.pending += fees - discount;
      total.pendingCount++;
      continue;
    }
    total.paid += fees - discount;
    total.paidCount++;
    const methodKey = `${method ?? ''}/${currency}`;
    let byMethod = cell.methods.get(methodKey);
    if (!byMethod) cell.methods.set(methodKey, (byMethod = { method, currency, revenue: 0, count: 0 }));
    byMethod.revenue += fees - discount;
    byMethod.count++;
  }
  // records built with fixed shapes (no spreads), so JSON.stringify walks monomorphic objects
  return input.cells.map((cell): RevenueRecord => {
    const { currencies, methods } = sums.get(cell.period_start, cell.cooling_unit_id)!;
    const currencyTotals: CurrencyTotal[] = [];
    let checkOuts = 0;
    for (const [currency, s] of currencies) {
      checkOuts += s.paidCount + s.pendingCount;
      currencyTotals.push({
        currency,
        total_revenue: centsToNumber(s.fees - s.discounts),
        paid_revenue: centsToNumber(s.paid),
        pending_revenue: centsToNumber(s.pending),
        cooling_fees: centsToNumber(s.fees),
        discounts: centsToNumber(s.discounts),
        check_outs: s.paidCount + s.pendingCount,
        paid_check_outs: s.paidCount,
        pending_check_outs: s.pendingCount,
      });
    }
    const paymentMethods: PaymentMethodTotal[] = [];
    for (const m of methods.values()) {
      paymentMethods.push({ payment_method: m.method, currency: m.currency, total_revenue: centsToNumber(m.revenue), check_outs: m.count });
    }
    return {
      cooling_unit_id: cell.cooling_unit_id,
      period_start: cell.period_start,
      period_end: cell.period_end,
      check_outs: checkOuts,
      currency_totals: currencyTotals.sort((a, b) => byText(a.currency, b.currency)),
      payment_methods: paymentMethods.sort((a, b) => nullsLast(a.payment_method, b.payment_method) || byText(a.currency, b.currency)),
    };
  });
}

// ---- impact -----------------------------------------------------------------------------------

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
    kgIn: 0n, co2: 0n, lost: 0n, surveyed: 0n, surveys: 0, lossNumerator: 0n, income: new Map(), farmers: 0,
  }));
  const baselines = new Map<string, Baseline>();
  for (const [periodStart, unitId, farmerId, lossShare, currency, pricePerKg] of parseJson(input.farmers)) {
    const cell = sums.get(periodStart, unitId);
    if (cell) cell.farmers++;
    baselines.set(key(periodStart, farmerId), {
      lossShare: lossShare === null ? null : scaled(lossShare, 4),
      currency,
      pricePerKg: pricePerKg === null ? null : scaled(pricePerKg, 2),
    });
  }

  // market surveys first: every crate needs its cell's loss share, kg lost / (kg sold + kg lost)
  for (const [periodStart, unitId, farmerId, currency, price, kgPerUnit, kgSold, kgLost] of parseJson(input.surveys)) {
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

  for (const [periodStart, unitId, farmerId, kgText, factorWithout, factorWith] of parseJson(input.crates)) {
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

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a === 0n ? 1n : a;
}
