// GET /api/v1/analytics/users: per period bucket, the farmers of the units the request reports on
// (registered, active, signed up) and a breakdown by cooling unit. Definitions: docs/figures.md
// ("users") and sql/queries/analytics-users.sql; counted by workers/rollups/users.ts.
import { z } from 'zod';
import { analyticsFilters, analyticsQuery, filtersOf, periodFields } from '../../analytics/query.js';
import { reportsOn, resolveReportingScope } from '../../analytics/reporting-units.js';
import { type RollupBody, sendEnvelope, type UsersInput } from '../../analytics/rollups.js';
import { bucketsOf, formatDay, resolveWindow } from '../../data-surface/window.js';
import { loadQueries } from '../../db/sql.js';
import { envelopeSchema, errorResponses, paginationFor } from '../../http/schemas.js';
import { DAY_MS } from '../../time.js';
import type { App } from '../../types.js';

const sql = loadQueries('analytics-users', ['usersJoined', 'usersCheckIns', 'usersCheckOuts'], { prepared: false });

const unitFigures = z
  .object({
    cooling_unit_id: z.number().int(),
    active_users: z.number().int().describe('Distinct farmers with a check-in or check-out at this unit in the period'),
    check_ins: z.number().int(),
    check_outs: z.number().int(),
  })
  .meta({ id: 'UsersByCoolingUnit' });

const record = z
  .object({
    period_start: periodFields.period_start,
    period_end: periodFields.period_end,
    registered_users: z
      .number()
      .int()
      .nullable()
      .describe("Farmers of the request's units registered before the end of the period; null for a period that has not begun"),
    active_users: z
      .number()
      .int()
      .describe("Distinct farmers with a check-in or check-out at any of the request's units (0 for a period that has not begun)"),
    sign_ups: z.number().int().describe("Farmers of the request's units who registered during the period"),
    by_cooling_unit: z
      .array(unitFigures)
      .describe(
        'Every unit the request reports on, ascending id: the live ones, and a deleted one for the periods that began before its deletion',
      ),
  })
  .meta({ id: 'UsersRecord' });

const envelope = envelopeSchema(record, analyticsFilters);

export default async function usersRoute(app: App) {
  app.get('/users', {
    // its ETag hashes the answer: the tables behind it carry no version (src/data-surface/conditional-requests.ts)
    config: { scope: 'users', conditional: 'answer' },
    schema: {
      operationId: 'users',
      summary: 'Registered, active and new farmers, with a breakdown by cooling unit',
      description:
        'One record per period bucket (not per unit); pagination is over the buckets. A farmer belongs to ' +
        "the request's units when registered by an operator of one of them or after a check-in at one of them. " +
        'Definitions: docs/figures.md.',
      tags: ['Analytics'],
      security: [{ apiToken: [] }],
      querystring: z.strictObject(analyticsQuery),
      response: { 200: envelope, ...errorResponses(400, 401, 403, 404, 429, 503) },
    },
    handler: async (request, reply) => {
      const now = app.clock.now();
      const window = resolveWindow(request.query, now);
      const { page, page_size: pageSize, period } = request.query;
      const scope = await resolveReportingScope(app.accessControl, request);
      const allBuckets = bucketsOf(window, period);
      // the buckets are known without touching data: total_count is exact and a page queries only its own
      const buckets = allBuckets.slice((page - 1) * pageSize, page * pageSize);
      let data: RollupBody = '[]';
      if (buckets.length > 0) {
        const first = buckets[0]!.start;
        const last = buckets.at(-1)!.end;
        const units: UsersInput['units'] = scope.units.map((unit) => [
          unit.id,
          unit.deletedAt === null ? buckets.length : buckets.filter((bucket) => reportsOn(unit, bucket.start)).length,
        ]);
        const values = [scope.units.map((unit) => unit.id), formatDay(first), formatDay(last)];
        data = await app.rollups.rollUp(
          {
            kind: 'users',
            buckets: buckets.map((bucket) => ({
              period_start: formatDay(bucket.start),
              period_end: formatDay(bucket.end),
              firstDay: (bucket.start - first) / DAY_MS,
              lastDay: (bucket.end - first) / DAY_MS,
              elapsed: bucket.start < now.getTime(),
            })),
            units,
            joined: { text: sql.usersJoined, values },
            checkIns: { text: sql.usersCheckIns, values },
            checkOuts: { text: sql.usersCheckOuts, values },
          },
          units.length * ((last - first) / DAY_MS + 1),
        );
      }
      const meta: z.infer<typeof envelope>['meta'] = {
        company_id: scope.companyId,
        filters: filtersOf(request.query, window),
        pagination: paginationFor(page, pageSize, allBuckets.length),
      };
      // the records are the rollup's JSON as it wrote them, field for field the schema's
      // (test/workers/users.test.ts), spliced in unparsed
      return sendEnvelope(reply, data, meta);
    },
  });
}
