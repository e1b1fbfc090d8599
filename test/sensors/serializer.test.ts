// The sensor-data page is written by fast-json-stringify; the zod schema on the route (the
// contract, and the OpenAPI document) would write it with zod + JSON.stringify. Same bytes.
import t from 'tap';
import { serializerCompiler } from 'fastify-type-provider-zod';
import { sensorPageSchema } from '../../src/routes/sensor-data/history.js';
import { serializeSensorPage } from '../../src/sensors/serializer.js';

const zodPath = serializerCompiler({ schema: sensorPageSchema, method: 'GET', url: '/api/v1/sensor-data' } as never);

const meta = (aggregation: string, overrides = {}, nextCursor: string | null = null) => ({
  company_id: 7,
  filters: {
    start_date: '2026-02-14',
    end_date: '2026-03-15',
    cooling_unit_id: null,
    location_id: null,
    specification_type: ['TEMPERATURE', 'HUMIDITY'],
    aggregation,
    ...overrides,
  },
  pagination: { page: 2, page_size: 3, total_count: 9, total_pages: 3, has_next: true, has_previous: true, next_cursor: nextCursor },
});

const pages = {
  raw: {
    // rows as the driver returns them: raw readings have no min or max at all
    data: [
      { timestamp: '2026-03-01T00:00:00Z', cooling_unit_id: 1, specification_type: 'HUMIDITY', value: 90.1, sample_count: 1 },
      {
        timestamp: '2026-03-01T00:00:00.001500Z',
        cooling_unit_id: 1,
        specification_type: 'TEMPERATURE',
        value: -0.30000000000000004,
        sample_count: 1,
      },
      { timestamp: '2026-03-01T00:15:00Z', cooling_unit_id: 12, specification_type: 'TEMPERATURE', value: 1e-7, sample_count: 1 },
    ],
    meta: meta('raw', { cooling_unit_id: 12, location_id: 3 }, 'AbC-_09xyz'),
  },
  hourly: {
    data: [
      {
        timestamp: '2026-03-01T13:00:00Z',
        cooling_unit_id: 4,
        specification_type: 'TEMPERATURE',
        value: 4.123456789012345,
        sample_count: 4,
        min: 3.9,
        max: 4.5,
      },
      {
        timestamp: '2026-03-01T14:00:00Z',
        cooling_unit_id: 4,
        specification_type: 'HUMIDITY',
        value: 91,
        sample_count: 1,
        min: 91,
        max: 91,
      },
    ],
    meta: meta('hourly', { specification_type: ['HUMIDITY'] }),
  },
  empty: { data: [], meta: meta('daily') },
};

for (const [name, page] of Object.entries(pages)) {
  t.equal(serializeSensorPage(page), zodPath(page), `${name}: fast-json-stringify and zod write the same bytes`);
}
t.same(JSON.parse(serializeSensorPage(pages.raw)), pages.raw, 'and they round-trip');
