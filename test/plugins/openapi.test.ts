// GET /openapi.json documents every endpoint of the spec under the spec's own path, with the
// parameters the routes validate, generated from the same zod schemas.
import t from 'tap';
import { createTestApp } from '../helpers/app.js';

const ctx = await createTestApp(t);
const response = await ctx.app.inject({ method: 'GET', url: '/openapi.json' });
type Operation = { parameters?: { name: string; in: string }[]; requestBody?: unknown; responses: Record<string, unknown> };
const document = response.json<{ openapi: string; paths: Record<string, Record<string, Operation>> }>();

t.equal(response.statusCode, 200);
t.match(document.openapi, /^3\.1\./, 'OpenAPI 3.1');

const ANALYTICS = ['start_date', 'end_date', 'period', 'page', 'page_size', 'cooling_unit_id', 'location_id'];
const expected: Array<[string, string, string[]]> = [
  ['post', '/api/v1/api-tokens', []],
  ['get', '/api/v1/api-tokens', ['page', 'page_size', 'state']],
  ['get', '/api/v1/api-tokens/{token_id}', ['token_id']],
  ['post', '/api/v1/api-tokens/{token_id}/revoke', ['token_id']],
  ['get', '/api/v1/analytics/users', ANALYTICS],
  ['get', '/api/v1/analytics/utilization', ANALYTICS],
  ['get', '/api/v1/analytics/revenue', [...ANALYTICS, 'payment_status']],
  ['get', '/api/v1/analytics/impact', ANALYTICS],
  ['get', '/api/v1/sensor-data', ['start_date', 'end_date', 'page', 'page_size', 'cooling_unit_id', 'specification_type', 'aggregation']],
  ['post', '/v1/users/validate-cooling-user-id/', []],
];

t.test('every endpoint under the spec\'s path, with its parameters', async (t) => {
  for (const [method, path, parameters] of expected) {
    const operation = document.paths[path]?.[method];
    t.ok(operation, `${method.toUpperCase()} ${path} is documented`);
    const documented = new Set((operation?.parameters ?? []).map((parameter) => parameter.name));
    for (const name of parameters) t.ok(documented.has(name), `${method.toUpperCase()} ${path}: ${name}`);
  }
  t.notOk(document.paths['/api/v1/api-tokens/'], 'no trailing-slash twin of the collection path');
});

t.test('the collection answers with and without the trailing slash', async (t) => {
  for (const url of ['/api/v1/api-tokens', '/api/v1/api-tokens/']) {
    t.equal((await ctx.app.inject({ method: 'GET', url })).statusCode, 401, `GET ${url}: routed (401 without a JWT, not 404)`);
  }
});
