// GET /api/v1/analytics/impact: per cooling unit and period, food loss prevented, income impact,
// CO2 reduction and community served. Definitions: docs/figures.md ("impact").
//
// Per (bucket, unit); check-ins and check-outs bucket by their own instants, market surveys by
// surveyed_at, when they were taken (UTC days), at their check-out's unit:
// - kg_checked_in: initial weight of the crates checked in.
// - market_loss_share: kg_lost / (kg_sold + kg_lost) pooled over the bucket's market surveys, every
//   farmer's (with or without a baseline); null with none.
// - food_loss_prevented_kg: sum over crates checked in of kg x max(0, the farmer's baseline
//   loss_share - market_loss_share). No market survey in the bucket: the loss after cooling is
//   unknown and nothing is claimed (0). A farmer without a baseline survey adds 0.
// - income_increase: sum over market surveys of (selling_price_per_unit / kg_per_unit - the
//   farmer's baseline average_price_per_kg) x kg_sold, in the company's `currency`; only surveys
//   whose currency equals both the baseline's and the company's count. Can be negative.
// - co2_reduction_kg: sum over crates checked in of kg x (crop emission factor without cooling -
//   with cooling); reported as is, even if a crop's factors make it negative.
// - farmers_served: distinct farmers with a check-in or check-out; community_served: that times
//   the country's household size (NG 4.7, IN 4.4, PH 4.2, otherwise 3), rounded half up.
// The farmer's baseline for a bucket is their latest baseline survey before the bucket ends, or,
// when none is that early, their earliest one. Figures are exact until rounded once (2 decimals,
// 4 for the share, half away from zero).
import { z } from 'zod';
import { analyticsFilters, analyticsQuery, filtersOf, gridPage, periodFields } from '../../analytics/query.js';
import { resolveReportingScope } from '../../analytics/reporting-units.js';
import { type ImpactRecord, pageCells, pageDays, type RecordMatches, type RollupBody, sendEnvelope } from '../../analytics/rollups.js';
import { resolveWindow } from '../../data-surface/window.js';
import { loadQueries } from '../../db/sql.js';
import { envelopeSchema, errorResponses } from '../../http/schemas.js';
import type { App } from '../../types.js';

const sql = {
  ...loadQueries('analytics-impact', ['impactCompany', 'impactCrates']),
  // Planned on every call, not prepared: their market surveys are found by date and kept by unit,
  // and a generic plan, blind to the units array's length and the window's bounds, reads every
  // survey of the window and then looks each check-out up. PostgreSQL kept that plan after five
  // calls for one unit's year, many times slower than a plan made for the call
  // (bench/generic-plans.ts replays every named statement both ways and measures it).
  ...loadQueries('analytics-impact', ['impactSurveys', 'impactFarmers'], { prepared: false }),
};

const twoDecimals = 'computed exactly, rounded once to 2 decimals, half away from zero';

const record = z
  .object({
    ...periodFields,
    currency: z.string().describe("The company's currency, in which income_increase is expressed"),
    kg_checked_in: z.number().describe('Initial weight of the crates checked in (exact, at most 2 decimals)'),
    food_loss_prevented_kg: z
      .number()
      .describe(
        "Sum over crates checked in of kg x max(0, the farmer's baseline loss share - market_loss_share); 0 without market " +
          `surveys in the period, nothing for a farmer without a baseline survey; ${twoDecimals}`,
      ),
    market_loss_share: z
      .number()
      .nullable()
      .describe(
        'kg lost / (kg sold + kg lost), pooled over the market surveys taken in the period; rounded to 4 decimals, half up; null when there were none',
      ),
    income_increase: z
      .number()
      .describe(
        '(selling price per kg - baseline price per kg) x kg sold, over the market surveys taken in the period whose currency ' +
          `is the company's and the baseline's; can be negative; ${twoDecimals}`,
      ),
    co2_reduction_kg: z.number().describe(`kg checked in x (crop emission factor without cooling - with cooling); ${twoDecimals}`),
    farmers_served: z.number().int().describe('Distinct farmers with a check-in or check-out at this unit in the period'),
    community_served: z
      .number()
      .int()
      .describe(
        "farmers_served x the country's average household size (NG 4.7, IN 4.4, PH 4.2, else 3), rounded half up (15 x 4.7 = 70.5 -> 71)",
      ),
    market_surveys: z.number().int().describe('Market surveys taken in the period'),
  })
  .meta({ id: 'ImpactRecord' });

const envelope = envelopeSchema(record, analyticsFilters);
/** The 200's JSON, for the tests: a change of the schema breaks them at the type check. */
export type ImpactPageJson = z.infer<typeof envelope>;
export type ImpactRecordMatchesSchema = RecordMatches<ImpactRecord, z.infer<typeof record>>;

export default async function impactRoute(app: App) {
  app.get('/impact', {
    // its ETag hashes the answer: the tables behind it carry no version (src/data-surface/conditional-requests.ts)
    config: { scope: 'impact', conditional: 'answer' },
    schema: {
      operationId: 'impact',
      summary: 'Food loss prevented, income impact, CO2 reduction and community served',
      description: 'One record per (period, unit). Definitions, rounding and edge cases: docs/figures.md.',
      tags: ['Analytics'],
      security: [{ apiToken: [] }],
      querystring: z.strictObject(analyticsQuery),
      response: { 200: envelope, ...errorResponses(400, 401, 403, 404, 429, 503) },
    },
    handler: async (request, reply) => {
      const window = resolveWindow(request.query, app.clock.now());
      const { page, page_size: pageSize, period } = request.query;
      const { companyId } = request.unitScope;
      const [scope, company] = await Promise.all([
        resolveReportingScope(app.accessControl, request),
        app.readDb.query<{ currency: string; country: string }>(sql.impactCompany, [companyId]),
      ]);
      const grid = gridPage(window, period, scope, page, pageSize);
      let data: RollupBody = '[]';
      if (grid.cells.length > 0) {
        const { days, periodStarts, periodEnds } = pageDays(grid);
        const values = [grid.unitIds, days, periodStarts];
        const { currency, country } = company.rows[0]!;
        data = await app.rollups.rollUp(
          {
            kind: 'impact',
            cells: pageCells(grid),
            currency,
            country,
            crates: { text: sql.impactCrates, values },
            surveys: { text: sql.impactSurveys, values },
            farmers: { text: sql.impactFarmers, values: [...values, periodEnds] },
          },
          grid.unitIds.length * days.length,
        );
      }
      const meta: z.infer<typeof envelope>['meta'] = {
        company_id: companyId,
        filters: filtersOf(request.query, window),
        pagination: grid.pagination,
      };
      return sendEnvelope(reply, data, meta);
    },
  });
}
