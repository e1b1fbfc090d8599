// GET /api/v1/sensor-data/changes: which spans of the readable units' history changed (late or
// re-sent readings landed) since a cursor, in the order they landed, with the cursor to ask from
// next time. The feed itself is src/sensors/changes.ts; partners re-read the spans through
// GET /api/v1/sensor-data (docs/partners.md, "Keeping a copy in sync"). A page is a function of its
// request, the token's units and the feed's head and pruning point: those are its (strong) ETag,
// and a matching If-None-Match is a 304 that reads no page (src/data-surface/conditional-requests.ts).
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { unitsText, versionTag } from '../../data-surface/conditional-requests.js';
import { errorResponses, idQuery, queryInteger, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../http/schemas.js';
import { CURSOR_PATTERN, invalidCursor } from '../../sensors/change-cursor.js';
import { createChangeFeed, cursorKeyReader, SINCE_NOW } from '../../sensors/changes.js';
import { SPECIFICATION_TYPES } from '../../sensors/formats.js';
import { createVersions } from '../../sensors/versions.js';
import type { App } from '../../types.js';

const SINCE_SHAPE = new RegExp(`^(${CURSOR_PATTERN.slice(1, -1)}|${SINCE_NOW})$`);

const changesQuery = {
  since: z
    .string({ error: 'must be given once' })
    .meta({ pattern: SINCE_SHAPE.source })
    .optional()
    .describe(
      'The next_cursor of an earlier answer; "now" for no changes, only the cursor after every change so far ' +
        '(take it before an export begins); omitted: from the oldest change the service keeps',
    ),
  page_size: queryInteger(1, MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE).describe(`Changes per page, 1..${MAX_PAGE_SIZE}`),
  cooling_unit_id: idQuery()
    .optional()
    .describe('Only this unit (404 when the token may not read it); default every unit the token may read'),
  location_id: idQuery().optional().describe('Only units at this location'),
};

const change = z
  .object({
    cooling_unit_id: z.number().int(),
    specification_type: z.enum(SPECIFICATION_TYPES),
    from: z.string().describe("ISO 8601 UTC: the span's first new reading"),
    to: z.string().describe("ISO 8601 UTC: the span's last new reading (inclusive)"),
    new_readings: z.number().int().describe('Readings the span gained'),
    landed_at: z.string().describe('ISO 8601 UTC: when the readings were stored'),
  })
  .meta({ id: 'SensorChange' });

const changesPageSchema = z.object({
  data: z.array(change),
  meta: z.object({
    company_id: z.number().int(),
    filters: z.object({
      since: z.string().nullable(),
      cooling_unit_id: z.number().int().nullable(),
      location_id: z.number().int().nullable(),
    }),
    pagination: z.object({
      page_size: z.number().int(),
      has_next: z.boolean().describe('More changes follow now: ask again with next_cursor at once'),
      next_cursor: z
        .string()
        .describe(
          'Where the next request continues, opaque (sealed for the company: nothing in it can be read or edited): ' +
            'pass it as since (store it once the changes are applied)',
        ),
    }),
  }),
});

export default async function sensorChangesRoute(app: App) {
  // on the read replica when there is one: cursors hold only database state, so any copy answers
  const feed = createChangeFeed(app.readDb);
  const versions = createVersions(app.readDb);
  const cursorKey = cursorKeyReader(app.db);
  const validatorOf = async (request: FastifyRequest, head: bigint, prunedThrough: bigint) => {
    const { companyId, unitIds } = request.unitScope;
    const parts = ['sensor-data/changes', companyId, unitsText(unitIds), JSON.stringify(request.query), head, prunedThrough];
    return { tag: versionTag(await cursorKey(), parts), weak: false };
  };

  app.get('/sensor-data/changes', {
    config: {
      scope: 'sensor_data',
      // read before the page only when an If-None-Match could match it: a 200's comes from its page
      conditional: async (request) => {
        if (!request.countDeferred) return null;
        const { head, prunedThrough } = await versions.feed();
        return validatorOf(request, head, prunedThrough);
      },
    },
    schema: {
      operationId: 'sensorDataChanges',
      summary: 'Spans of sensor history that changed since a cursor (late or corrected readings)',
      tags: ['Sensor data'],
      security: [{ apiToken: [] }],
      querystring: z.strictObject(changesQuery),
      response: { 200: changesPageSchema, ...errorResponses(400, 401, 403, 404, 410, 429, 503) },
    },
    // a since of the wrong shape is refused with the rest of the input, before the units are looked
    // at (a 404 for them would hide it), as invalid_cursor like any cursor the service did not give;
    // the signature, which needs the token's company, is the feed's to check
    preValidation: async (request) => {
      const { since } = request.query as { since?: unknown };
      if (typeof since === 'string' && !SINCE_SHAPE.test(since)) throw invalidCursor();
    },
    handler: async (request) => {
      const query = request.query;
      const { companyId, unitIds } = request.unitScope;
      const page = await feed.page(companyId, unitIds, query.since, query.page_size);
      // what this page was read at (a replica may have moved on since the version was read)
      request.validator = await validatorOf(request, page.head, page.prunedThrough);
      return {
        data: page.changes,
        meta: {
          company_id: companyId,
          filters: { since: query.since ?? null, cooling_unit_id: query.cooling_unit_id ?? null, location_id: query.location_id ?? null },
          pagination: { page_size: query.page_size, has_next: page.hasNext, next_cursor: page.nextCursor },
        },
      };
    },
  });
}
