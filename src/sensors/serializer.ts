// The sensor-data 200 response, serialized by fast-json-stringify from a JSON schema instead of
// the app-wide zod encode + JSON.stringify: a 1,000-record page is this service's heaviest
// response. The zod schema stays on the route for validation of the contract in tests and for
// the OpenAPI document; this schema mirrors it property for property, in the same order, so the
// bytes are the same (test/sensors/serializer.test.ts holds the two side by side).
// The serialisers are compiled by their first use, and fast-json-stringify (with the Ajv it loads)
// loaded then: a process that serves no sensor page neither loads nor compiles them.
import type { Schema } from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify';
import { serializerCompiler as zodSerializerCompiler } from 'fastify-type-provider-zod';
import { compiledOnFirstUse } from '../../workers/fast-json.js';

const integer: Schema = { type: 'integer' };
const number: Schema = { type: 'number' };
const string: Schema = { type: 'string' };

const sensorRecordJsonSchema: Schema = {
  type: 'object',
  required: ['timestamp', 'cooling_unit_id', 'specification_type', 'value', 'sample_count'],
  properties: {
    timestamp: string,
    cooling_unit_id: integer,
    specification_type: string,
    value: number,
    // fast-json-stringify writes required properties first: this order is the zod schema's too
    sample_count: integer,
    min: number,
    max: number,
  },
};

export const sensorPageJsonSchema: Schema = {
  type: 'object',
  required: ['data', 'meta'],
  properties: {
    data: { type: 'array', items: sensorRecordJsonSchema },
    meta: {
      type: 'object',
      required: ['company_id', 'filters', 'pagination'],
      properties: {
        company_id: integer,
        filters: {
          type: 'object',
          required: ['start_date', 'end_date', 'cooling_unit_id', 'location_id', 'specification_type', 'aggregation'],
          properties: {
            start_date: string,
            end_date: string,
            cooling_unit_id: { type: 'integer', nullable: true },
            location_id: { type: 'integer', nullable: true },
            specification_type: { type: 'array', items: string },
            aggregation: string,
          },
        },
        pagination: {
          type: 'object',
          required: ['page', 'page_size', 'total_count', 'total_pages', 'has_next', 'has_previous', 'next_cursor'],
          properties: {
            page: integer,
            page_size: integer,
            total_count: integer,
            total_pages: integer,
            has_next: { type: 'boolean' },
            has_previous: { type: 'boolean' },
            next_cursor: { type: 'string', nullable: true },
          },
        },
      },
    },
  },
};

const serializers = compiledOnFirstUse({ page: sensorPageJsonSchema, records: { type: 'array', items: sensorRecordJsonSchema } });

export const serializeSensorPage = (page: unknown): string => serializers().page(page);

/** Records as a JSON array, written exactly as inside a whole page. */
export const serializeSensorRecords = (records: unknown[]): string => serializers().records(records);

// A page whose records are already JSON (src/sensors/history.ts: raw pages are written by
// PostgreSQL) carries them under this key beside an empty `data`; the serializer splices them in.
const RENDERED_DATA = Symbol('the data array, as JSON');
const EMPTY_DATA_PREFIX = '{"data":[]';

export function withRenderedData<Body extends { data: unknown[] }>(body: Body, dataJson: string): Body {
  return Object.assign(body, { [RENDERED_DATA]: dataJson });
}

function serializeSensorResponse(payload: { data: unknown[]; [RENDERED_DATA]?: string }): string {
  const dataJson = payload[RENDERED_DATA];
  if (dataJson === undefined) return serializeSensorPage(payload as never);
  const envelope = serializeSensorPage({ ...payload, data: [] } as never);
  // fast-json-stringify writes `data` first (the schema's first required property)
  return `{"data":${dataJson}${envelope.slice(EMPTY_DATA_PREFIX.length)}`;
}

/** The route's serializers: fast-json-stringify for 200, the app's zod serializer for errors. */
export const sensorDataSerializerCompiler: FastifySerializerCompiler<unknown> = (route) =>
  String(route.httpStatus) === '200'
    ? (data) => serializeSensorResponse(data as never)
    : zodSerializerCompiler(route as Parameters<typeof zodSerializerCompiler>[0]);
