// Tracing off (no OTLP endpoint, the default) costs nothing: the app is built and serves a data
// request without loading one OpenTelemetry module (src/tracing/start.ts is imported only when
// tracing is on). The check is shown to see such modules: importing start.ts loads them.
import { createRequire } from 'node:module';
import t from 'tap';
import { createTestApp } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { issueToken } from '../helpers/tokens.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
// OpenTelemetry's packages are CommonJS: imported from ESM they are still loaded into require.cache.
// @opentelemetry/api is not counted: prom-client's process metrics load it whatever tracing does
// (for exemplars); it is an interface of no-ops until an SDK registers behind it.
const loadedOpenTelemetry = () =>
  Object.keys(createRequire(import.meta.url).cache).filter((path) =>
    /[/\\](@opentelemetry[/\\](?!api[/\\])|@fastify[/\\]otel[/\\])/.test(path),
  );

t.test('tracing off: a data request served without loading OpenTelemetry', async (t) => {
  const ctx = await createTestApp(t, { REDIS_URL });
  t.equal(ctx.config.tracing, null, 'off by default');
  const acme = await createCompany(ctx.db.pool, 'Acme');
  const { headers } = await issueToken(ctx, acme.employeeId);
  const reply = await ctx.app.inject({ method: 'GET', url: '/api/v1/analytics/utilization?page_size=1', headers });
  t.equal(reply.statusCode, 200);
  t.equal(reply.headers.traceresponse, undefined, 'no traceresponse header');
  t.same(loadedOpenTelemetry(), [], 'no OpenTelemetry SDK, exporter or instrumentation loaded');
  await import('../../src/tracing/start.js');
  t.ok(loadedOpenTelemetry().length > 10, 'the check sees them once tracing is loaded');
});
