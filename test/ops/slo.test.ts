// The SLOs as code (ops/slo/slos.yml, docs/slos.md): the committed ops/prometheus/slo-rules.yml is
// what `npm run generate:slo` makes of the source now, a latency threshold is a bucket the
// service's histogram has (otherwise the SLI would read a series that never exists), and the route
// groups name routes the service serves: every API-token route in partner data and every route of
// /api/v1/api-tokens in token management, so that a new one is not left outside its SLO unnoticed.
// (promtool runs the rules' unit tests: test/ops/prometheus-rules.test.ts.)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import t from 'tap';
import { servedOpenApiDocument } from '../../client/codegen/generate-types.js';
import { alertName, generateSloRules, readSource, RULES_FILE, severitiesOf } from '../../ops/slo/generate.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { repoRoot } from '../helpers/entry.js';
import { alertRules } from './promql.js';

const source = readSource();

t.test('the committed ops/prometheus/slo-rules.yml is what ops/slo/slos.yml generates', async (t) => {
  const generated = generateSloRules(source);
  const committed = readFileSync(RULES_FILE, 'utf8');
  if (generated === committed) return t.pass('identical');
  const a = committed.split('\n');
  const b = generated.split('\n');
  const line = a.findIndex((text, i) => text !== b[i]);
  t.fail(
    `ops/prometheus/slo-rules.yml is stale from line ${line + 1} (committed: ${JSON.stringify(a[line])}, generated: ${JSON.stringify(b[line])}): run npm run generate:slo`,
  );
});

t.test('every SLO has its alerts in the rules, and nothing else is named like one', async (t) => {
  const expected = source.slos.flatMap((slo) => severitiesOf(slo).map((severity) => alertName(slo, severity)));
  t.same(
    alertRules()
      .map((rule) => rule.alert!)
      .filter((name) => /Burn$/.test(name)),
    expected,
    expected.join(', '),
  );
});

t.test("a latency SLI's threshold is a bucket of http_request_duration_seconds", async (t) => {
  const pool = new pg.Pool({ max: 1 }); // never connects
  t.teardown(() => pool.end());
  const { requestDuration } = createMetrics({ pool, rollupQueueSize: () => 0, replicaState: () => 'none' });
  requestDuration.observe({ method: 'GET', route: '/', status: '200' }, 0);
  // a histogram's values carry `le` beside the labels it was declared with
  const buckets = (await requestDuration.get()).values
    .map((value) => (value.labels as Record<string, unknown>).le)
    .filter((le): le is number => typeof le === 'number');
  t.ok(buckets.length > 5, `buckets: ${buckets.join(', ')}`);
  for (const slo of source.slos.filter((slo) => slo.sli === 'latency')) {
    t.ok(buckets.includes(slo.threshold_seconds!), `${slo.name}: ${slo.threshold_seconds} s is a bucket`);
  }
});

t.test('the route groups name served routes, and leave no API-token or token-management route out', async (t) => {
  const document = (await servedOpenApiDocument()) as { paths: Record<string, Record<string, { security?: Record<string, unknown>[] }>> };
  // the document writes /api/v1/api-tokens/{token_id}; Fastify's route label /api/v1/api-tokens/:token_id
  const served = Object.entries(document.paths).map(([path, item]) => ({ route: path.replace(/\{(\w+)\}/g, ':$1'), item }));
  const routes = new Set(served.map(({ route }) => route));
  for (const [group, listed] of Object.entries(source.route_groups)) {
    t.same(
      listed.filter((route) => !routes.has(route)),
      [],
      `${group}: every route is served`,
    );
  }
  const apiTokenRoutes = served
    .filter(({ item }) => Object.values(item).some((operation) => operation.security?.some((scheme) => 'apiToken' in scheme)))
    .map(({ route }) => route);
  t.ok(apiTokenRoutes.length >= 7, `${apiTokenRoutes.length} API-token routes`);
  t.same(
    apiTokenRoutes.filter((route) => !source.route_groups['partner-data']!.includes(route)),
    [],
    'every API-token route is partner data',
  );
  const managementRoutes = [...routes].filter((route) => route === '/api/v1/api-tokens' || route.startsWith('/api/v1/api-tokens/'));
  t.same(
    managementRoutes.filter((route) => !source.route_groups['token-management']!.includes(route)),
    [],
    `every route of /api/v1/api-tokens is token management (${managementRoutes.length})`,
  );
});

t.test('docs/slos.md states every SLO with its objective', async (t) => {
  const doc = readFileSync(join(repoRoot, 'docs', 'slos.md'), 'utf8');
  for (const slo of source.slos) {
    const row = doc.split('\n').find((line) => line.startsWith(`| \`${slo.name}\``));
    if (!t.ok(row, `a row for ${slo.name} in docs/slos.md's table`)) continue;
    t.match(row, `${Number((slo.objective * 100).toFixed(4))} %`, `${slo.name}: its objective`);
  }
});
