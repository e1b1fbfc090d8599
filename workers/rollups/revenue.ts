// The revenue rollup: a page's check-outs summed into per-currency and per-payment-method totals
// for each cell, in exact integer cents.
// Imports nothing of the project outside workers/ (see index.ts).
//
// Money here is integer cents in plain Numbers, not BigInts: cooling_fees and discount are
// numeric(14, 2) and never negative, so every amount is below 10^14 cents and every sum of them
// is exact while it stays below 2^53 (checked once, on output: with no negative addend, a final
// sum in range means every partial sum was). BigInt arithmetic cost most of a small page's CPU.
import { centsOf, centsToNumber } from './decimal.js';
import { type Cell, CellGrid, type RevenueInput, rowsOf } from './rows.js';

export interface CurrencyTotal {
  currency: string;
  total_revenue: number;
  paid_revenue: number;
  pending_revenue: number;
  cooling_fees: number;
  discounts: number;
  check_outs: number;
  paid_check_outs: number;
  pending_check_outs: number;
}

export interface PaymentMethodTotal {
  payment_method: string | null;
  currency: string;
  total_revenue: number;
  check_outs: number;
}

export interface RevenueRecord extends Cell {
  check_outs: number;
  currency_totals: CurrencyTotal[];
  payment_methods: PaymentMethodTotal[];
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const nullsLast = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : byText(a, b));

const byCurrency = (a: CurrencyTotal, b: CurrencyTotal) => byText(a.currency, b.currency);
const byMethodThenCurrency = (a: PaymentMethodTotal, b: PaymentMethodTotal) =>
  nullsLast(a.payment_method, b.payment_method) || byText(a.currency, b.currency);

/**
 * Sorts a cell's handful of totals in place (insertion sort, stable). Array.prototype.sort
 * allocates ~900 bytes of working state per call from two elements on (measured with V8's
 * sampling heap profiler), and a small page sorts twenty of these lists: on the warm-token page
 * that was a tenth of the rollup's garbage.
 */
function sortFew<T>(items: T[], compare: (a: T, b: T) => number): T[] {
  for (let i = 1; i < items.length; i++) {
    const item = items[i]!;
    let j = i - 1;
    for (; j >= 0 && compare(items[j]!, item) > 0; j--) items[j + 1] = items[j]!;
    items[j + 1] = item;
  }
  return items;
}

interface CurrencySums {
  fees: number;
  discounts: number;
  paid: number;
  pending: number;
  paidCount: number;
  pendingCount: number;
}
interface MethodSums {
  method: string | null;
  currency: string;
  revenue: number;
  count: number;
}

export function rollupRevenue(input: RevenueInput): RevenueRecord[] {
  const sums = new CellGrid(input.cells, () => ({ currencies: new Map<string, CurrencySums>(), methods: new Map<string, MethodSums>() }));
  for (const [periodStart, unitId, currency, coolingFees, discountText, paid, method] of rowsOf(input.checkOuts)) {
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
      currency_totals: sortFew(currencyTotals, byCurrency),
      payment_methods: sortFew(paymentMethods, byMethodThenCurrency),
    };
  });
}
