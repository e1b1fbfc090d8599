// GET /api/v1/analytics/utilization: per cooling unit and period, how full the unit was
// (time-averaged, as a fraction of crate capacity; above 1 when overfilled) and what moved.
// Definitions: docs/figures.md ("utilization") and sql/queries/analytics-utilization.sql.
import { z } from 'zod';
import { analyticsFilters, analyticsQuery, bucketParams, cellKey, filtersOf, gridPage, periodFields } from '../../analytics/query.js';
import { resolveReportingScope } from '../../analytics/reporting-units.js';
import { formatDay, resolveWindow } from '../../data-surface/window.js';
import { loadQueries } from '../../db/sql.js';
import { envelopeSchema, errorResponses } from '../../http/schemas.js';
import type { App } from '../../types.js';

const sql = loadQueries('analytics-utilization', ['utilization'], { prepared: false });

const notBegun = 'null for a period that has not begun';

const record = z
  .object({
    ...periodFields,
    utilization_rate: z
      .number()
      .nullable()
      .describe(
        'average_crates_in_storage / capacity_crates (0..1, above 1 when overfilled), computed exactly and rounded once ' +
          `to 4 decimals, half up; ${notBegun}`,
      ),
    average_crates_in_storage: z
      .number()
      .nullable()
      .describe(
        "Crates in storage, time-averaged over the elapsed part of the period (up to now, or to the unit's deletion), " +
          `rounded to 4 decimals, half up; 0 for a unit without crates; ${notBegun}`,
      ),
    capacity_crates: z.number().int(),
    crates_in_storage: z
      .number()
      .int()
      .nullable()
      .describe(`Crates in the unit at the end of the period's elapsed part (now, for the current period); ${notBegun}`),
    kg_in_storage: z.number().nullable().describe(`Kg in the unit at the same instant (exact, at most 2 decimals); ${notBegun}`),
    check_ins: z.number().int().describe('Check-ins in the period'),
    check_outs: z.number().int().describe('Check-outs in the period'),
    crates_checked_in: z.number().int(),
    kg_checked_in: z.number().describe('Exact, at most 2 decimals'),
    crates_checked_out: z.number().describe('Crates that left, partial crates as fractions; rounded to 2 decimals, half up'),
    kg_checked_out: z.number().describe('Exact, at most 2 decimals'),
    active_users: z.number().int().describe('Distinct farmers with a check-in or check-out at this unit in the period'),
  })
  .meta({ id: 'UtilizationRecord' });

type UtilizationRow = Omit<z.infer<typeof record>, 'period_end'>;

export default async function utilizationRoute(app: App) {
  app.get('/utilization', {
    // its ETag hashes the answer: the tables behind it carry no version (src/data-surface/conditional-requests.ts)
    config: { scope: 'utilization', conditional: 'answer' },
    schema: {
      operationId: 'utilization',
      summary: 'Cooling unit utilization, occupancy and movements',
      description: 'One record per (period, unit). Definitions, rounding and edge cases: docs/figures.md.',
      tags: ['Analytics'],
      security: [{ apiToken: [] }],
      querystring: z.strictObject(analyticsQuery),
      response: { 200: envelopeSchema(record, analyticsFilters), ...errorResponses(400, 401, 403, 404, 429, 503) },
    },
    handler: async (request) => {
      const now = app.clock.now();
      const window = resolveWindow(request.query, now);
      const { page, page_size: pageSize, period } = request.query;
      const scope = await resolveReportingScope(app.accessControl, request);
      const grid = gridPage(window, period, scope, page, pageSize);
      const rows = new Map<string, UtilizationRow>();
      if (grid.cells.length > 0) {
        const deletedAt = grid.units.map((unit) => (unit.deletedAt === null ? null : new Date(unit.deletedAt).toISOString()));
        const query = (db: typeof app.readDb, unitIds: number[], deleted: Array<string | null>) =>
          db.query<UtilizationRow>(sql.utilization, [unitIds, ...bucketParams(grid.buckets), now, deleted]);
        const known = new Set<number>();
        for (const row of (await query(app.readDb, grid.unitIds, deletedAt)).rows) {
          rows.set(cellKey(row.period_start, row.cooling_unit_id), row);
          known.add(row.cooling_unit_id);
        }
        // a unit the read replica does not know yet (created a moment ago on the primary, the
        // replica lagging): its cells come from the primary, which the unit directory read
        const missing = grid.unitIds.flatMap((unitId, index) => (known.has(unitId) ? [] : [index]));
        if (missing.length > 0 && app.readRouting.state() !== 'none') {
          const found = await query(
            app.db,
            missing.map((index) => grid.unitIds[index]!),
            missing.map((index) => deletedAt[index]!),
          );
          for (const row of found.rows) rows.set(cellKey(row.period_start, row.cooling_unit_id), row);
        }
      }
      return {
        data: grid.cells.map(({ bucket, unitId }) => ({
          ...rows.get(cellKey(formatDay(bucket.start), unitId))!,
          period_end: formatDay(bucket.end),
        })),
        meta: { company_id: scope.companyId, filters: filtersOf(request.query, window), pagination: grid.pagination },
      };
    },
  });
}
