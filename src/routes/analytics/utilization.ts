// GET /api/v1/analytics/utilization: per cooling unit and period, how full the unit was
// (time-averaged, as a fraction of crate capacity; above 1 when overfilled) and what moved.
import { z } from 'zod';
import { analyticsFilters, analyticsQuery, bucketParams, cellKey, filtersOf, gridPage, periodFields } from '../../analytics/query.js';
import { formatDay, resolveWindow } from '../../analytics/window.js';
import { loadQueries } from '../../db/sql.js';
import { envelopeSchema, errorResponses } from '../../http/schemas.js';
import type { App } from '../../types.js';

const sql = loadQueries('utilization', ['utilization']);

const record = z
  .object({
    ...periodFields,
    utilization_rate: z.number().describe('Time-averaged crates in storage / crate capacity (0..1, >1 when overfilled)'),
    average_crates_in_storage: z.number(),
    capacity_crates: z.number().int(),
    crates_in_storage: z.number().int().describe('Crates in the unit at the end of the period (or now)'),
    kg_in_storage: z.number().describe('Kg in the unit at the end of the period (or now)'),
    check_ins: z.number().int(),
    check_outs: z.number().int(),
    crates_checked_in: z.number().int(),
    kg_checked_in: z.number(),
    crates_checked_out: z.number().describe('Crates that left, partial crates as fractions'),
    kg_checked_out: z.number(),
    active_users: z.number().int().describe('Distinct farmers with a check-in or check-out at this unit'),
  })
  .meta({ id: 'UtilizationRecord' });

type UtilizationRow = Omit<z.infer<typeof record>, 'period_end'>;

export default async function utilizationRoute(app: App) {
  app.get('/utilization', {
    config: { scope: 'utilization' },
    schema: {
      summary: 'Cooling unit utilization, occupancy and movements',
      tags: ['Analytics'],
      security: [{ apiToken: [] }],
      querystring: z.strictObject(analyticsQuery),
      response: { 200: envelopeSchema(record, analyticsFilters), ...errorResponses(400, 401, 403, 404, 429, 503) },
    },
    handler: async (request) => {
      const now = app.clock.now();
      const window = resolveWindow(request.query, now);
      const { page, page_size: pageSize, period } = request.query;
      const grid = gridPage(window, period, request.unitScope, page, pageSize);
      const rows = new Map<string, UtilizationRow>();
      if (grid.cells.length > 0) {
        const { rows: found } = await app.db.query<UtilizationRow>(sql.utilization, [grid.unitIds, ...bucketParams(grid.buckets), now]);
        for (const row of found) rows.set(cellKey(row.period_start, row.cooling_unit_id), row);
      }
      return {
        data: grid.cells.map(({ bucket, unitId }) => ({
          ...rows.get(cellKey(formatDay(bucket.start), unitId))!,
          period_end: formatDay(bucket.end),
        })),
        meta: { company_id: request.unitScope.companyId, filters: filtersOf(request.query, window), pagination: grid.pagination },
      };
    },
  });
}
