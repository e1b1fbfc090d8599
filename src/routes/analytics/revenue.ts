// GET /api/v1/analytics/revenue: per cooling unit and period, what check-outs earned, per currency
// (never converted), split into paid and pending, with a payment-method breakdown.
//
// Definitions (docs/figures.md, "revenue"): a check-out belongs to the bucket of its
// checked_out_at (UTC day). Revenue of a check-out = cooling_fees - discount. payment_status picks
// the check-outs that count (paid: paid = true; pending: paid = false; all). Pending payments are
// folded into currency_totals (pending_revenue, pending_check_outs) rather than a separate object,
// so every currency's paid and pending halves sit side by side and add up to total_revenue.
// payment_methods covers paid check-outs only (a pending one has no method yet), per method and
// currency; a paid check-out recorded without a method is listed under payment_method null. Sums
// are exact (integer cents in workers/rollups/) and reported with at most 2 decimals.
import { z } from 'zod';
import { analyticsFilters, analyticsQuery, filtersOf, type GridPage, gridPage, periodFields } from '../../analytics/query.js';
import { resolveReportingScope } from '../../analytics/reporting-units.js';
import {
  INLINE_BELOW_UNIT_DAYS,
  pageCellColumns,
  pageCells,
  pageDays,
  type RecordMatches,
  type RevenueRecord,
  type RollupBody,
  sendEnvelope,
} from '../../analytics/rollups.js';
import { resolveWindow } from '../../data-surface/window.js';
import { dayArrayLiteral, intArrayLiteral } from '../../db/array-literal.js';
import { loadQueries } from '../../db/sql.js';
import { envelopeSchema, errorResponses } from '../../http/schemas.js';
import type { App } from '../../types.js';

const sql = loadQueries('analytics-revenue', ['revenueCheckOuts', 'revenuePageJson']);

export const PAYMENT_STATUSES = ['paid', 'pending', 'all'] as const;
const paymentStatus = z.enum(PAYMENT_STATUSES, { error: 'must be one of paid, pending, or all' });

const money = (description: string) => z.number().describe(`${description} (exact, at most 2 decimals)`);

const currencyTotal = z
  .object({
    currency: z.string().describe('ISO 4217 code; amounts are never converted'),
    total_revenue: money('cooling_fees - discounts'),
    paid_revenue: money('Revenue of paid check-outs'),
    pending_revenue: money('Revenue of check-outs not paid yet'),
    cooling_fees: money('Cooling fees before discounts'),
    discounts: money('Discounts granted'),
    check_outs: z.number().int(),
    paid_check_outs: z.number().int(),
    pending_check_outs: z.number().int(),
  })
  .meta({ id: 'RevenueCurrencyTotal' });

const paymentMethodTotal = z
  .object({
    payment_method: z.string().nullable().describe('CASH, CREDIT_CARD, QR_CODE, BANK_TRANSFER, USSD, OPAY, UPI; null when not recorded'),
    currency: z.string(),
    total_revenue: money('Revenue of paid check-outs with this method'),
    check_outs: z.number().int(),
  })
  .meta({ id: 'RevenuePaymentMethodTotal' });

const record = z
  .object({
    ...periodFields,
    check_outs: z.number().int().describe('Check-outs counted (all currencies)'),
    currency_totals: z.array(currencyTotal).describe('One entry per currency, sorted by currency'),
    payment_methods: z.array(paymentMethodTotal).describe('Paid check-outs by method and currency'),
  })
  .meta({ id: 'RevenueRecord' });

const filters = analyticsFilters.extend({ payment_status: paymentStatus });
const envelope = envelopeSchema(record, filters);
export type RevenueRecordMatchesSchema = RecordMatches<RevenueRecord, z.infer<typeof record>>;

export default async function revenueRoute(app: App) {
  async function pageJson(grid: GridPage, days: string[], periodStarts: string[], status: string): Promise<string | null> {
    const { unitIds, periodStarts: cellStarts, periodEnds: cellEnds } = pageCellColumns(grid);
    const { rows } = await app.readDb.query<{ beyond_exact: number; body: string }>(sql.revenuePageJson, [
      intArrayLiteral(unitIds),
      dayArrayLiteral(cellStarts),
      dayArrayLiteral(cellEnds),
      dayArrayLiteral(days),
      dayArrayLiteral(periodStarts),
      status,
    ]);
    return rows[0]!.beyond_exact > 0 ? null : `[${rows[0]!.body}]`;
  }

  app.get('/revenue', {
    // its ETag hashes the answer: the tables behind it carry no version (src/data-surface/conditional-requests.ts)
    config: { scope: 'revenue', conditional: 'answer' },
    schema: {
      operationId: 'revenue',
      summary: 'Revenue per currency, paid and pending, by payment method',
      description: 'One record per (period, unit). Definitions, rounding and edge cases: docs/figures.md.',
      tags: ['Analytics'],
      security: [{ apiToken: [] }],
      querystring: z.strictObject({
        ...analyticsQuery,
        payment_status: paymentStatus.default('all').describe('Which check-outs count: paid, pending, or all'),
      }),
      response: { 200: envelope, ...errorResponses(400, 401, 403, 404, 429, 503) },
    },
    handler: async (request, reply) => {
      const window = resolveWindow(request.query, app.clock.now());
      const { page, page_size: pageSize, period, payment_status: status } = request.query;
      const scope = await resolveReportingScope(app.accessControl, request);
      const grid = gridPage(window, period, scope, page, pageSize);
      let data: RollupBody | null = '[]';
      if (grid.cells.length > 0) {
        const { days, periodStarts } = pageDays(grid);
        const unitDays = grid.unitIds.length * days.length;
        // a small page is written by PostgreSQL (sql/queries/analytics-revenue.sql revenuePageJson):
        // its rows never become JavaScript objects; null when a sum is beyond the rollup's exact range
        data = unitDays < INLINE_BELOW_UNIT_DAYS ? await pageJson(grid, days, periodStarts, status) : null;
        if (data === null) {
          const checkOuts = { text: sql.revenueCheckOuts, values: [grid.unitIds, days, periodStarts, status] };
          data = await app.rollups.rollUp({ kind: 'revenue', cells: pageCells(grid), checkOuts }, unitDays);
        }
      }
      const meta: z.infer<typeof envelope>['meta'] = {
        company_id: scope.companyId,
        filters: { ...filtersOf(request.query, window), payment_status: status },
        pagination: grid.pagination,
      };
      return sendEnvelope(reply, data, meta);
    },
  });
}
