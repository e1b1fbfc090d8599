// Every operation of the served OpenAPI document has an operationId: camelCase, and its own. A
// generator names its methods after them (one without gets a name made up from the path, which a
// later path change would rename), so a route added without one, or with another's, fails here.
// The client's method names follow the same ids (client/README.md, "Method names"): a data
// method is named as its operation (`revenue` calls `revenue`), `tokens.<verb>` calls
// `<verb>ApiToken` (`tokens.list`: `listApiTokens`). Each client method is called here against a
// recording fetch, and the operation its request reaches must carry the name the rule gives.
import t from 'tap';
import { ColdtrackClient, DATA_PATHS, RateBudget } from '@coldtrack/client';
import { servedOpenApiDocument } from '../../client/codegen/generate-types.js';

type Operation = { operationId?: string };
const document = (await servedOpenApiDocument()) as { paths: Record<string, Record<string, Operation>> };
const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ method: method.toUpperCase(), path, operationId: operation.operationId })),
);

t.test('every operation has a camelCase operationId of its own', async (t) => {
  t.ok(operations.length >= 14, `${operations.length} operations`);
  const seen = new Map<string, string>();
  for (const { method, path, operationId } of operations) {
    const name = `${method} ${path}`;
    if (!t.ok(operationId, `${name} has an operationId`)) continue;
    t.match(operationId, /^[a-z][a-zA-Z0-9]*$/, `${name}: ${operationId} is camelCase`);
    t.notOk(
      seen.has(operationId!),
      `${operationId} is ${name}'s alone${seen.has(operationId!) ? ` (also ${seen.get(operationId!)})` : ''}`,
    );
    seen.set(operationId!, name);
  }
});

t.test('the published ids stay: a rename breaks every generated client (docs/partners.md lists them)', async (t) => {
  const published: Record<string, string> = {
    'GET /healthz': 'checkLiveness',
    'GET /readyz': 'checkReadiness',
    'POST /api/v1/api-tokens': 'createApiToken',
    'GET /api/v1/api-tokens': 'listApiTokens',
    'GET /api/v1/api-tokens/{token_id}': 'retrieveApiToken',
    'POST /api/v1/api-tokens/{token_id}/revoke': 'revokeApiToken',
    'POST /api/v1/api-tokens/{token_id}/rotate': 'rotateApiToken',
    'GET /api/v1/api-tokens/{token_id}/usage': 'getApiTokenUsage',
    'GET /api/v1/cooling-units': 'listCoolingUnits',
    'GET /api/v1/analytics/users': 'users',
    'GET /api/v1/analytics/utilization': 'utilization',
    'GET /api/v1/analytics/revenue': 'revenue',
    'GET /api/v1/analytics/impact': 'impact',
    'GET /api/v1/sensor-data': 'sensorData',
    'GET /api/v1/sensor-data/changes': 'sensorDataChanges',
    'POST /v1/users/validate-cooling-user-id/': 'validateCoolingUserId',
    'GET /api/v1/audit-events': 'listAuditEvents',
    'GET /api/v1/me': 'me',
    'POST /api/v1/token-leaks': 'reportTokenLeaks',
  };
  const served = Object.fromEntries(operations.map(({ method, path, operationId }) => [`${method} ${path}`, operationId]));
  for (const [operation, id] of Object.entries(published)) t.equal(served[operation], id, `${operation}: ${id}`);
});

/** The operation a request reaches: its method and a path matching the template. */
function operationOf(method: string, url: URL) {
  const pathname = url.pathname.replace(/^\/base/, '');
  return operations.find(
    (operation) => operation.method === method && new RegExp(`^${operation.path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(pathname),
  );
}

/** A client whose every request is recorded and answered with an empty page. */
function recordingClient() {
  const requests: Array<{ method: string; url: URL }> = [];
  const client = new ColdtrackClient({
    baseUrl: 'http://coldtrack.invalid/base',
    token: 'recorded',
    budget: new RateBudget(),
    fetch: async (input, init) => {
      requests.push({ method: init?.method ?? 'GET', url: new URL(String(input)) });
      const page = { data: [], meta: { pagination: { has_next: false } } };
      return new Response(JSON.stringify(page), { status: 200, headers: { 'content-type': 'application/json' } });
    },
  });
  return { client, requests };
}

// ColdtrackClient's members that are no operation of their own: the generic ways to reach the data methods
const GENERIC = new Set(['constructor', 'budget', 'get', 'pages', 'paginate']);

// methods of the client that are one operation each, besides the data endpoints
const SINGLE_OPERATIONS = ['me', 'sensorDataChanges', 'sensorDataBulk'];

t.test('each method of the client calls the operation of its name', async (t) => {
  const methods = Object.getOwnPropertyNames(ColdtrackClient.prototype).filter((name) => !GENERIC.has(name));
  t.same(
    methods.sort(),
    [...Object.keys(DATA_PATHS), ...SINGLE_OPERATIONS].sort(),
    'the data methods of DATA_PATHS, me(), sensorDataChanges() and sensorDataBulk()',
  );
  for (const name of methods) {
    const { client, requests } = recordingClient();
    await (client as unknown as Record<string, (query: object) => Promise<unknown>>)[name]!({});
    t.equal(requests.length, 1, `${name}() sends one request`);
    const reached = operationOf(requests[0]!.method, requests[0]!.url);
    t.equal(reached?.operationId, name, `${name}() reaches ${reached?.method} ${reached?.path}: operationId ${name}`);
  }
});

t.test('auditEvents.list() and coolingUnits.list() call listAuditEvents and listCoolingUnits', async (t) => {
  for (const [namespace, operationId] of [
    ['auditEvents', 'listAuditEvents'],
    ['coolingUnits', 'listCoolingUnits'],
  ] as const) {
    const { client, requests } = recordingClient();
    await client[namespace].list({});
    t.equal(requests.length, 1);
    t.equal(operationOf(requests[0]!.method, requests[0]!.url)?.operationId, operationId, `${namespace}.list()`);
    t.same(Object.keys(client[namespace]), ['list'], `${namespace}: no other verb yet`);
  }
});

t.test('each tokens.<verb> of the client calls <verb>ApiToken (list: listApiTokens; usage: getApiTokenUsage)', async (t) => {
  const { client: probe } = recordingClient();
  const verbs = Object.keys(probe.tokens);
  t.ok(verbs.length >= 5, `tokens.${verbs.join(', tokens.')}`);
  for (const verb of verbs) {
    const { client, requests } = recordingClient();
    const call = (client.tokens as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[verb]!;
    // every one takes a token id, a body or a query first: an id reaches the same operation
    await (verb === 'create' || verb === 'list' ? call({}) : call('a-token-id', {}));
    t.equal(requests.length, 1, `tokens.${verb}() sends one request`);
    const reached = operationOf(requests[0]!.method, requests[0]!.url);
    // a noun, not a verb: the read of a token's usage is get...Usage, as the published id says
    const expected = verb === 'list' ? 'listApiTokens' : verb === 'usage' ? 'getApiTokenUsage' : `${verb}ApiToken`;
    t.equal(reached?.operationId, expected, `tokens.${verb}() reaches ${reached?.method} ${reached?.path}: operationId ${expected}`);
  }
});
