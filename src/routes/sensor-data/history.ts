// GET /api/v1/sensor-data: temperature and humidity history of the units the token may read, as
// raw readings or hourly/daily aggregates (value = mean, with min, max and sample_count), ordered
// by timestamp, cooling_unit_id, specification_type. Pagination that stays cheap and stable at
// any depth is src/sensors/history.ts, which hands back the records as JSON; the rest of the 200
// body is written by fast-json-stringify (src/sensors/serializer.ts).
import { z } from 'zod';
import { dateParam, formatDay, MAX_SENSOR_WINDOW_DAYS, resolveWindow } from '../../data-surface/window.js';
import { envelopeSchema, errorResponses, idQuery, paginationFor, paginationQuery } from '../../http/schemas.js';
import { SPECIFICATION_TYPES } from '../../sensors/formats.js';
import { AGGREGATIONS, createSensorHistory } from '../../sensors/history.js';
import { sensorDataSerializerCompiler, withRenderedData } from '../../sensors/serializer.js';
import { DAY_MS } from '../../time.js';
import type { App } from '../../types.js';

const specificationTypes = z
  .string({ error: 'must be given once, as a comma-separated list' })
  .transform((text) => text.split(',').map((type) => type.trim()))
  .pipe(z.array(z.enum(SPECIFICATION_TYPES, { error: 'must be TEMPERATURE, HUMIDITY or both, comma-separated' })))
  .meta({ pattern: '^ *(TEMPERATURE|HUMIDITY) *(, *(TEMPERATURE|HUMIDITY) *)*$' });

const sensorQuery = {
  start_date: dateParam.optional().describe('YYYY-MM-DD, inclusive (UTC), from 0001-01-01; default end_date - 29 days'),
  end_date: dateParam.optional().describe('YYYY-MM-DD, inclusive (UTC), up to 9999-12-31; default today; must not be before start_date'),
  ...paginationQuery,
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
        `Longest window: ${MAX_SENSOR_WINDOW_DAYS.raw} days, ${MAX_SENSOR_WINDOW_DAYS.daily.toLocaleString('en')} with daily`,
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

export const sensorPageSchema = envelopeSchema(record, filters);

export default async function sensorDataRoute(app: App) {
  // page queries on the read replica when there is one (src/plugins/config-pools-clock.ts)
  const history = createSensorHistory(app.readDb, app.clock);

  app.get('/sensor-data', {
    config: { scope: 'sensor_data' },
    serializerCompiler: sensorDataSerializerCompiler,
    schema: {
      operationId: 'sensorData',
      summary: 'Temperature and humidity history, raw or aggregated hourly/daily',
      tags: ['Sensor data'],
      security: [{ apiToken: [] }],
      querystring: z.strictObject(sensorQuery),
      response: { 200: sensorPageSchema, ...errorResponses(400, 401, 403, 404, 429, 503) },
    },
    handler: async (request) => {
      const query = request.query;
      const window = resolveWindow(query, app.clock.now(), MAX_SENSOR_WINDOW_DAYS[query.aggregation]);
      // canonical order, duplicates folded: the same filter is the same cached query
      const types = SPECIFICATION_TYPES.filter((type) => (query.specification_type ?? SPECIFICATION_TYPES).includes(type));
      const { dataJson, totalCount } = await history.page({
        unitIds: request.unitScope.unitIds,
        types,
        fromMs: window.start,
        toMs: window.end + DAY_MS,
        aggregation: query.aggregation,
        page: query.page,
        pageSize: query.page_size,
      });
      return withRenderedData(
        {
          data: [],
          meta: {
            company_id: request.unitScope.companyId,
            filters: {
              start_date: formatDay(window.start),
              end_date: formatDay(window.end),
              cooling_unit_id: query.cooling_unit_id ?? null,
              location_id: query.location_id ?? null,
              specification_type: types,
              aggregation: query.aggregation,
            },
            pagination: paginationFor(query.page, query.page_size, totalCount),
          },
        },
        dataJson,
      );
    },
  });
}
