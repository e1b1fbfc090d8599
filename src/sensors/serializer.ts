// The sensor-data 200 response, serialized by fast-json-stringify from a JSON schema instead of
// the app-wide zod encode + JSON.stringify: a 1,000-record page is this service's heaviest
// response. The zod schema stays on the route for validation of the contract in tests and for
// the OpenAPI document; this schema mirrors it property for property, in the same order, so the
// bytes are the same (test/sensors/serializer.test.ts holds the two side by side).
import fastJson, { type Schema } from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify';
import { serializerCompiler as zodSerializerCompiler } from 'fastify-type-provider-zod';

const integer: Schema = { type: 'integer' };
const number: Schema = { type: 'number' };
const string: Schema = { type: 'string' };

export const sensorPageJsonSchema: Schema = {
  type: 'object',
  required: ['data', 'meta'],
  properties: {
    data: {
      type: 'array',
      items: {
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
      },
    },
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
          required: ['page', 'page_size', 'total_count', 'total_pages', 'has_next', 'has_previous'],
          properties: {
            page: integer,
            page_size: integer,
            total_count: integer,
            total_pages: integer,
            has_next: { type: 'boolean' },
            has_previous: { type: 'boolean' },
          },
        },
      },
    },
  },
};

export const serializeSensorPage = fastJson(sensorPageJsonSchema);

/** The route's serializers: fast-json-stringify for 200, the app's zod serializer for errors. */
export const sensorDataSerializerCompiler: FastifySerializerCompiler<unknown> = (route) =>
  String(route.httpStatus) === '200'
    ? (data) => serializeSensorPage(data as never)
    : zodSerializerCompiler(route as Parameters<typeof zodSerializerCompiler>[0]);
