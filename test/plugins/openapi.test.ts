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
  ['post', '/api/v1/api-tokens/{token_id}/rotate', ['token_id']],
  ['get', '/api/v1/cooling-units', ['page', 'page_size']],
  ['get', '/api/v1/analytics/users', ANALYTICS],
  ['get', '/api/v1/analytics/utilization', ANALYTICS],
  ['get', '/api/v1/analytics/revenue', [...ANALYTICS, 'payment_status']],
  ['get', '/api/v1/analytics/impact', ANALYTICS],
  ['get', '/api/v1/sensor-data', ['start_date', 'end_date', 'page', 'page_size', 'cooling_unit_id', 'specification_type', 'aggregation']],
  ['post', '/v1/users/validate-cooling-user-id/', []],
];

t.test("every endpoint under the spec's path, with its parameters", async (t) => {
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

t.test('one schema per shape: no unreferenced *Input twin of a component', async (t) => {
  const schemas = Object.keys((document as unknown as { components: { schemas: Record<string, unknown> } }).components.schemas);
  t.ok(schemas.includes('ApiToken') && schemas.includes('Error'), `components: ${schemas.join(', ')}`);
  const text = JSON.stringify(document);
  for (const name of schemas.filter((schema) => schema.endsWith('Input'))) {
    t.ok(text.includes(`"#/components/schemas/${name}"`), `${name} is referenced`);
  }
  t.notOk(schemas.includes('ErrorInput'), 'no ErrorInput');
});

t.test('every operation documents every answer it can give, with its headers', async (t) => {
  type Answer = { description: string; headers?: Record<string, unknown>; content?: unknown };
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      name: `${method.toUpperCase()} ${path}`,
      path,
      operation: operation as Operation & { responses: Record<string, Answer>; security?: unknown[] },
    })),
  );
  t.ok(operations.length >= 10, `${operations.length} operations`);
  for (const { name, path, operation } of operations) {
    const statuses = Object.keys(operation.responses);
    for (const status of ['400', '408', '431', '500', '503']) t.ok(statuses.includes(status), `${name}: ${status} documented`);
    for (const [status, answer] of Object.entries(operation.responses)) {
      t.not(answer.description, 'Default Response', `${name} ${status}: described`);
      if (status !== '408' && status !== '431') t.ok(answer.headers?.['X-Request-Id'], `${name} ${status}: X-Request-Id`);
    }
    if (path === '/healthz' || path === '/readyz') continue;
    t.ok(operation.responses['429']?.headers?.['Retry-After'], `${name}: 429 with Retry-After`);
    // 200, 201, 202 (queued) or 204 (deleted: no body)
    const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))?.[1];
    t.ok(success, `${name}: a success answer`);
    t.ok(success?.headers?.['X-RateLimit-Reset'], `${name}: X-RateLimit-* on the success answer`);
    if (operation.security?.length && operation.responses['401']) {
      t.ok(operation.responses['401'].headers?.['WWW-Authenticate'], `${name}: 401 with WWW-Authenticate`);
    }
    if (operation.requestBody) t.ok(statuses.includes('413') && statuses.includes('415'), `${name}: 413 and 415 for its body`);
  }
});

t.test('query integers are integers with the bounds the service applies', async (t) => {
  const parameters = document.paths['/api/v1/sensor-data']!.get!.parameters as unknown as Array<{
    name: string;
    schema: Record<string, unknown>;
  }>;
  const byName = Object.fromEntries(parameters.map((parameter) => [parameter.name, parameter.schema]));
  t.same(byName.page, { type: 'integer', minimum: 1, maximum: 2147483647 });
  t.same(byName.page_size, { type: 'integer', minimum: 1, maximum: 1000 });
  t.same(byName.cooling_unit_id, { type: 'integer', minimum: 1, maximum: 2147483647 });
});

t.test('servers (PUBLIC_BASE_URL, "/" by default), licence and contact', async (t) => {
  const { servers, info } = document as unknown as { servers: unknown; info: Record<string, unknown> };
  t.same(servers, [{ url: '/', description: 'This deployment' }], 'by default the origin the document was fetched from');
  t.match(
    info,
    {
      license: { name: /^Proprietary/, identifier: /^LicenseRef-/ },
      contact: { name: /partner support/, email: /@/ },
    },
    'info.license (an SPDX LicenseRef: no open-source licence) and info.contact',
  );
  const configured = await createTestApp(t, { PUBLIC_BASE_URL: 'https://api.coldtrack.example/partner/' }, { database: ctx.db });
  const served = (await configured.app.inject({ method: 'GET', url: '/openapi.json' })).json<{ servers: unknown }>();
  t.same(
    served.servers,
    [{ url: 'https://api.coldtrack.example/partner', description: 'This deployment' }],
    'PUBLIC_BASE_URL, without its trailing slash',
  );
});
