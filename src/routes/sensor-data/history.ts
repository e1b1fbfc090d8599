// GET /api/v1/sensor-data: temperature and humidity history of the units the token may read, as
// raw readings or hourly/daily aggregates (value = mean, with min, max and sample_count), ordered
// by timestamp, cooling_unit_id, specification_type. Pages by number, or by the cursor each page
// gives for the next (next_cursor), which is the exact way to walk a history that grows
// (src/sensors/history-cursor.ts). Pagination that stays cheap at any depth is
// src/sensors/history.ts, which hands back the records as JSON; the rest of the 200 body is
// written by fast-json-stringify (src/sensors/serializer.ts). Every page has a version, read before
// it, that a matching If-None-Match turns into a 304 reading no page (src/data-surface/conditional-requests.ts).
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { unitsText, type Validator, versionTag } from '../../data-surface/conditional-requests.js';
import { dateParam, formatDay, MAX_SENSOR_WINDOW_DAYS, resolveWindow } from '../../data-surface/window.js';
import { invalidRequest } from '../../http/errors.js';
import { errorResponses, idQuery, paginationFor, paginationMeta, paginationQuery } from '../../http/schemas.js';
import { cursorKeyReader } from '../../sensors/changes.js';
import { SPECIFICATION_TYPES } from '../../sensors/formats.js';
import { AGGREGATIONS, createSensorHistory, type WalkStart } from '../../sensors/history.js';
import {
  decodeHistoryCursor,
  encodeHistoryCursor,
  filtersDigest,
  HISTORY_CURSOR_PATTERN,
  invalidHistoryCursor,
  looksLikeHistoryCursor,
} from '../../sensors/history-cursor.js';
import { sensorDataSerializerCompiler, withRenderedData } from '../../sensors/serializer.js';
import { createVersions } from '../../sensors/versions.js';
import { DAY_MS } from '../../time.js';
import type { App } from '../../types.js';

export const specificationTypes = z
  .string({ error: 'must be given once, as a comma-separated list' })
  .transform((text) => text.split(',').map((type) => type.trim()))
  .pipe(z.array(z.enum(SPECIFICATION_TYPES, { error: 'must be TEMPERATURE, HUMIDITY or both, comma-separated' })))
  .meta({ pattern: '^ *(TEMPERATURE|HUMIDITY) *(, *(TEMPERATURE|HUMIDITY) *)*$' });

/** 3660 as "3,660": toLocaleString would load ICU's locale data as the app loads, for one comma. */
const thousands = (value: number) => String(value).replace(/\B(?=(\d{3})+$)/g, ',');

const sensorQuery = {
  start_date: dateParam.optional().describe('YYYY-MM-DD, inclusive (UTC), from 0001-01-01; default end_date - 29 days'),
  end_date: dateParam.optional().describe('YYYY-MM-DD, inclusive (UTC), up to 9999-12-31; default today; must not be before start_date'),
  ...paginationQuery,
  cursor: z
    .string({ error: 'must be given once' })
    .meta({ pattern: HISTORY_CURSOR_PATTERN })
    .optional()
    .describe(
      'The next_cursor of the page before: the page after its last record, exactly, whatever landed or was read ' +
        'meanwhile (not with page; the filters must be those of the walk, the dates may be left out)',
    ),
  cooling_unit_id: idQuery()
    .optional()
    .describe('Only this unit (404 when the token may not read it); default every unit the token may read'),
  location_id: idQuery().optional().describe('Only units at this location'),
  specification_type: specificationTypes.optional().describe('TEMPERATURE, HUMIDITY or TEMPERATURE,HUMIDITY (default both)'),
  aggregation: z
    .enum(AGGREGATIONS, { error: 'must be hourly or daily (or raw, the default)' })
    .default('raw')
    .describe(
      'hourly or daily means with min, max and sample_count; raw (default) for the readings themselves. ' +
        `Longest window: ${MAX_SENSOR_WINDOW_DAYS.raw} days, ${thousands(MAX_SENSOR_WINDOW_DAYS.daily)} with daily`,
    )
    .meta({ 'x-max-window-days': MAX_SENSOR_WINDOW_DAYS }),
};

const record = z
  .object({
    timestamp: z.string().describe("ISO 8601 UTC: the reading's instant, or the start of its hour or day"),
    cooling_unit_id: z.number().int(),
    specification_type: z.enum(SPECIFICATION_TYPES),
    value: z.number().describe("The reading, or the mean of the bucket's readings"),
    sample_count: z.number().int().describe('Readings behind the record (1 for raw readings)'),
    min: z.number().optional().describe('Lowest reading of the bucket (aggregations only)'),
    max: z.number().optional().describe('Highest reading of the bucket (aggregations only)'),
  })
  .meta({ id: 'SensorRecord' });

const filters = z.object({
  start_date: z.string(),
  end_date: z.string(),
  cooling_unit_id: z.number().int().nullable(),
  location_id: z.number().int().nullable(),
  specification_type: z.array(z.enum(SPECIFICATION_TYPES)),
  aggregation: z.enum(AGGREGATIONS),
});

export const sensorPageSchema = z.object({
  data: z.array(record),
  meta: z.object({
    company_id: z.number().int(),
    filters,
    pagination: paginationMeta.extend({
      has_next: z.boolean().describe('True exactly when a record follows this page in the window'),
      next_cursor: z
        .string()
        .nullable()
        .describe('Pass as cursor (with the same filters) for the page after this one, exactly; null on the last page'),
    }),
  }),
});

export default async function sensorDataRoute(app: App) {
  // page queries on the read replica when there is one (src/plugins/database.ts); a page that
  // replica has not caught up with (a walk's first page, or the primary when a page without a
  // cursor arrived), on the primary
  const history = createSensorHistory(app.readDb, app.clock, { primary: app.readRouting.settings().replica ? app.db : null });
  const cursorKey = cursorKeyReader(app.db);
  const versions = createVersions(app.readDb);
  // With a replica, a page without a cursor must see everything the primary had committed when it
  // was asked for: a `since=now` taken before the walk may point there, and a reading the replica
  // has not replayed would be in neither. The primary's feed head is read for it (one single-row
  // statement), once per request and before anything is read on the replica.
  const primaryVersions = app.readRouting.settings().replica ? createVersions(app.db) : null;
  const arrivalHeads = new WeakMap<FastifyRequest, Promise<bigint>>();
  const arrivalHead = async (request: FastifyRequest): Promise<bigint | undefined> => {
    if (!primaryVersions) return undefined;
    let head = arrivalHeads.get(request);
    if (!head) {
      head = primaryVersions.feed().then((feed) => feed.head);
      arrivalHeads.set(request, head);
    }
    return head;
  };

  // A page's version: the request as resolved (its window, so today's date when the dates are the
  // defaults), the token's units and the version of their readings. Weak: total_count comes from
  // counts up to COUNTS_TTL_MS old and next_cursor names the feed's head, so two answers of one
  // version may differ there, never in their records. None (the answer's bytes decide) while a load
  // of the units settles (SETTLE_SECONDS), for raw readings the store's retention may drop, and for a
  // cursor the handler refuses.
  const versionOf = async (request: FastifyRequest): Promise<Validator | null> => {
    const query = request.query as { cursor?: string; aggregation: keyof typeof MAX_SENSOR_WINDOW_DAYS };
    const { companyId, unitIds } = request.unitScope;
    let window;
    if (query.cursor === undefined) window = resolveWindow(query, app.clock.now(), MAX_SENSOR_WINDOW_DAYS[query.aggregation]);
    else {
      const walk = decodeHistoryCursor(await cursorKey(), companyId, query.cursor);
      if (!walk) return null;
      window = walk.window;
    }
    const minHead = query.cursor === undefined ? await arrivalHead(request) : undefined;
    const state = await versions.readings(unitIds, query.aggregation === 'raw' ? window.start : null);
    if (state.settling || state.withinRetention) return null;
    // read on a replica behind the primary: its version may name an older page than the primary's
    if (minHead !== undefined && state.head < minHead) return null;
    const parts = ['sensor-data', companyId, unitsText(unitIds), JSON.stringify(query), window.start, window.end, state.version];
    return { tag: versionTag(await cursorKey(), parts), weak: true, head: state.head };
  };

  app.get('/sensor-data', {
    config: { scope: 'sensor_data', conditional: versionOf },
    serializerCompiler: sensorDataSerializerCompiler,
    schema: {
      operationId: 'sensorData',
      summary: 'Temperature and humidity history, raw or aggregated hourly/daily',
      tags: ['Sensor data'],
      security: [{ apiToken: [] }],
      querystring: z.strictObject(sensorQuery),
      response: { 200: sensorPageSchema, ...errorResponses(400, 401, 403, 404, 429, 503) },
    },
    // a cursor of the wrong shape, or beside a page number, is refused with the rest of the input,
    // before the units are looked at (a 404 for them would hide it); the seal, which needs the
    // token's company, is checked in the handler
    preValidation: async (request) => {
      const { cursor, page } = request.query as { cursor?: unknown; page?: unknown };
      // given twice: the schema refuses it, naming cursor
      if (typeof cursor !== 'string') return;
      if (!looksLikeHistoryCursor(cursor)) throw invalidHistoryCursor();
      if (page !== undefined) throw invalidRequest('page', 'page and cursor cannot be combined: the cursor says which page is next');
    },
    handler: async (request) => {
      const query = request.query;
      const { companyId } = request.unitScope;
      // canonical order, duplicates folded: the same filter is the same cached query
      const types = SPECIFICATION_TYPES.filter((type) => (query.specification_type ?? SPECIFICATION_TYPES).includes(type));
      const walkFilters = filtersDigest({
        aggregation: query.aggregation,
        types,
        coolingUnitId: query.cooling_unit_id ?? null,
        locationId: query.location_id ?? null,
      });
      let window;
      let start: { page: number } | WalkStart = { page: query.page };
      if (query.cursor !== undefined) {
        const walk = decodeHistoryCursor(await cursorKey(), companyId, query.cursor);
        if (!walk) throw invalidHistoryCursor();
        if (!walk.filters.equals(walkFilters)) throw invalidHistoryCursor('cursor continues a walk with other filters');
        // the walk's window, also when its dates were the defaults and the day has turned since
        window = walk.window;
        if (query.start_date !== undefined && query.start_date !== formatDay(window.start)) {
          throw invalidRequest('start_date', `start_date must be the walk's, ${formatDay(window.start)} (or left out)`);
        }
        if (query.end_date !== undefined && query.end_date !== formatDay(window.end)) {
          throw invalidRequest('end_date', `end_date must be the walk's, ${formatDay(window.end)} (or left out)`);
        }
        start = walk;
      } else {
        window = resolveWindow(query, app.clock.now(), MAX_SENSOR_WINDOW_DAYS[query.aggregation]);
        const minHead = await arrivalHead(request);
        if (minHead !== undefined) start = { page: query.page, minHead };
      }
      const page = await history.page({
        unitIds: request.unitScope.unitIds,
        types,
        fromMs: window.start,
        toMs: window.end + DAY_MS,
        aggregation: query.aggregation,
        pageSize: query.page_size,
        start,
      });
      // read from a snapshot older than its version (the read routing moved to a replica behind): not that version's page
      const version = request.validator?.head;
      if (version !== undefined && page.head !== null && page.head < version) request.validator = null;
      const nextCursor = page.next
        ? encodeHistoryCursor(await cursorKey(), companyId, {
            ...page.next,
            aggregation: query.aggregation,
            page: page.page + 1,
            window,
            filters: walkFilters,
          })
        : null;
      return withRenderedData(
        {
          data: [],
          meta: {
            company_id: companyId,
            filters: {
              start_date: formatDay(window.start),
              end_date: formatDay(window.end),
              cooling_unit_id: query.cooling_unit_id ?? null,
              location_id: query.location_id ?? null,
              specification_type: types,
              aggregation: query.aggregation,
            },
            pagination: { ...paginationFor(page.page, query.page_size, page.totalCount), has_next: page.hasNext, next_cursor: nextCursor },
          },
        },
        page.dataJson,
      );
    },
  });
}
