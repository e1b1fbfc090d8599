// GET /api/v1/analytics/users: per period bucket, the farmers of the token's units (registered,
// active, signed up) and a breakdown by cooling unit. Definitions: sql/queries/users-analytics.sql.
import { z } from 'zod';
import { analyticsFilters, analyticsQuery, bucketParams, filtersOf, periodFields } from '../../analytics/query.js';
import { bucketsOf, formatDay, resolveWindow } from '../../analytics/window.js';
import { loadQueries } from '../../db/sql.js';
import { envelopeSchema, errorResponses, paginationFor } from '../../http/schemas.js';
import type { App } from '../../types.js';

const sql = loadQueries('users-analytics', ['usersByPeriod']);

const unitFigures = z
  .object({
    cooling_unit_id: z.number().int(),
    active_users: z.number().int().describe('Distinct farmers with a check-in or check-out at this unit'),
    check_ins: z.number().int(),
    check_outs: z.number().int(),
  })
  .meta({ id: 'UsersByCoolingUnit' });

const record = z
  .object({
    period_start: periodFields.period_start,
    period_end: periodFields.period_end,
    registered_users: z.number().int().describe("Farmers of the token's units registered before the end of the period"),
    active_users: z.number().int().describe("Distinct farmers with a check-in or check-out at any of the token's units"),
    sign_ups: z.number().int().describe("Farmers of the token's units who registered during the period"),
    by_cooling_unit: z.array(unitFigures).describe("Every unit the request reads, ascending id"),
  })
  .meta({ id: 'UsersRecord' });

type UsersRow = Omit<z.infer<typeof record>, 'period_end'>;

export default async function usersRoute(app: App) {
  app.get('/users', {
    config: { scope: 'users' },
    schema: {
      summary: 'Registered, active and new farmers, with a breakdown by cooling unit',
      description:
        'One record per period bucket (not per unit); pagination is over the buckets. A farmer belongs to ' +
        "the token's units when registered by an operator of one of them or after a check-in at one of them.",
      tags: ['Analytics'],
      security: [{ apiToken: [] }],
      querystring: z.strictObject(analyticsQuery),
      response: { 200: envelopeSchema(record, analyticsFilters), ...errorResponses(400, 401, 403, 404, 429, 503) },
    },
    handler: async (request) => {
      const window = resolveWindow(request.query, app.clock.now());
      const { page, page_size: pageSize, period } = request.query;
      const allBuckets = bucketsOf(window, period);
      // the buckets are known without touching data: total_count is exact and a page queries only its own
      const buckets = allBuckets.slice((page - 1) * pageSize, page * pageSize);
      const rows = new Map<string, UsersRow>();
      if (buckets.length > 0) {
        const { rows: found } = await app.db.query<UsersRow>(sql.usersByPeriod, [request.unitScope.unitIds, ...bucketParams(buckets)]);
        for (const row of found) rows.set(row.period_start, row);
      }
      return {
        data: buckets.map((bucket) => ({ ...rows.get(formatDay(bucket.start))!, period_end: formatDay(bucket.end) })),
        meta: {
          company_id: request.unitScope.companyId,
          filters: filtersOf(request.query, window),
          pagination: paginationFor(page, pageSize, allBuckets.length),
        },
      };
    },
  });
}
