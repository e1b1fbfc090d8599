// Tracing in one process, with an in-memory exporter (src/tracing/): a data request's span and
// its children (the token check with its cache hit or miss, the Redis calls, the PostgreSQL
// queries by name), the trace id in the request's log lines and in the traceresponse header, a
// traceparent honoured only from a TRUST_PROXY peer, and no token, JWT or query value in any span.
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import t from 'tap';
import { startTracing } from '../../src/tracing/start.js';
import { createTestApp } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { issueToken } from '../helpers/tokens.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const PROXY = '10.0.0.1';
const exporter = new InMemorySpanExporter();
const settings = {
  url: 'http://127.0.0.1:9/v1/traces',
  protocol: 'http/json' as const,
  headers: {},
  sampler: 'parentbased_always_on' as const,
  ratio: 1,
  serviceName: 'coldtrack-test',
  resourceAttributes: {},
};
// before the test database: its pool is made after, so it traces its queries
const tracing = await startTracing(settings, { trustProxy: [PROXY], exporter });
t.teardown(() => tracing.shutdown());
const ctx = await createTestApp(t, { REDIS_URL, TRUST_PROXY: PROXY }, { tracing });
const acme = await createCompany(ctx.db.pool, 'Acme');
const { token, headers } = await issueToken(ctx, acme.employeeId);
const jwt = await ctx.jwtFor(acme.employeeId);
const PATH = '/api/v1/analytics/utilization?page_size=1';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const traceparent = (flags = '01') => `00-${TRACE_ID}-${PARENT_ID}-${flags}`;

const traceOf = (header: unknown) => /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/.exec(String(header));
async function spansOf(traceId: string): Promise<ReadableSpan[]> {
  await tracing.flush();
  return exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
}
const logLinesOf = (requestId: string) =>
  ctx.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.reqId === requestId);

t.test('a data request: its span, its children, the trace id in its header and log lines', async (t) => {
  const reply = await ctx.app.inject({ method: 'GET', url: PATH, headers: { ...headers, 'x-request-id': 'traced-1' } });
  t.equal(reply.statusCode, 200);
  const [, traceId, spanId, flags] = traceOf(reply.headers.traceresponse) ?? [];
  t.ok(traceId, 'traceresponse: 00-<trace id>-<span id>-<flags>');
  t.equal(flags, '01', 'sampled');
  const spans = await spansOf(traceId!);
  const byName = new Map(spans.map((span) => [span.name, span]));
  const request = byName.get('GET /api/v1/analytics/utilization');
  t.ok(request, `the request's span, named after its route (spans: ${[...byName.keys()].join(', ')})`);
  t.equal(request?.spanContext().spanId, spanId, 'the header names the request span');
  t.equal(request?.parentSpanContext, undefined, 'a new root');
  t.equal(request?.attributes['url.path'], '/api/v1/analytics/utilization', 'the path, without its query');
  t.equal(request?.attributes['http.response.status_code'], 200);
  const check = byName.get('token check');
  t.equal(check?.parentSpanContext?.spanId, spanId, 'the token check under the request');
  t.equal(check?.attributes['coldtrack.token.cache'], 'miss', 'a first use: not in the cache');
  const underCheck = spans.filter((span) => span.parentSpanContext?.spanId === check?.spanContext().spanId).map((span) => span.name);
  t.ok(underCheck.includes('api-tokens.tokenForAuth'), 'the token read from PostgreSQL, by its query name');
  t.ok(underCheck.includes('redis revocation check'), 'the revocation check in Redis');
  t.ok(underCheck.includes('redis rate-limit window'), "the token's rate limit in Redis");
  t.equal(byName.get('api-tokens.tokenForAuth')?.attributes['db.system.name'], 'postgresql');
  t.ok(
    spans.some((span) => /^analytics-utilization\./.test(span.name)),
    'the page query by name',
  );
  const lines = logLinesOf('traced-1');
  t.ok(lines.length >= 2, `${lines.length} log lines`);
  t.ok(
    lines.every((line) => line.trace_id === traceId),
    'every log line of the request carries its trace id',
  );
  t.ok(lines.some((line) => line.msg === 'incoming request') && lines.some((line) => line.msg === 'request completed'));

  // the process's first revocation check empties the cache (src/tokens/revocation.ts): the third is warm
  await ctx.app.inject({ method: 'GET', url: PATH, headers });
  const again = await ctx.app.inject({ method: 'GET', url: PATH, headers });
  const warm = await spansOf(traceOf(again.headers.traceresponse)![1]!);
  t.equal(warm.find((span) => span.name === 'token check')?.attributes['coldtrack.token.cache'], 'hit', 'then a cache hit');
  t.notOk(
    warm.some((span) => span.name === 'api-tokens.tokenForAuth'),
    'and no token query',
  );
});

t.test('a traceparent is honoured from a TRUST_PROXY peer only', async (t) => {
  const trusted = await ctx.app.inject({
    method: 'GET',
    url: PATH,
    headers: { ...headers, traceparent: traceparent() },
    remoteAddress: PROXY,
  });
  t.equal(traceOf(trusted.headers.traceresponse)?.[1], TRACE_ID, 'from the proxy: the request joins the caller trace');
  const joined = (await spansOf(TRACE_ID)).find((span) => span.name.startsWith('GET '));
  t.equal(joined?.parentSpanContext?.spanId, PARENT_ID, "under the caller's span");

  const stranger = await ctx.app.inject({
    method: 'GET',
    url: PATH,
    headers: { ...headers, traceparent: traceparent() },
    remoteAddress: '203.0.113.9',
  });
  const [, traceId] = traceOf(stranger.headers.traceresponse) ?? [];
  t.not(traceId, TRACE_ID, 'from anyone else: a trace of its own');
  const root = (await spansOf(traceId!)).find((span) => span.name.startsWith('GET '));
  t.equal(root?.parentSpanContext, undefined, 'a new root');

  const unsampled = await ctx.app.inject({
    method: 'GET',
    url: PATH,
    headers: { ...headers, traceparent: `00-${'a'.repeat(32)}-${PARENT_ID}-00`, 'x-request-id': 'unsampled-1' },
    remoteAddress: PROXY,
  });
  t.match(unsampled.headers.traceresponse, new RegExp(`^00-${'a'.repeat(32)}-[0-9a-f]{16}-00$`), 'the caller decided: not sampled');
  t.same(await spansOf('a'.repeat(32)), [], 'and nothing exported');
  t.ok(
    logLinesOf('unsampled-1').every((line) => line.trace_id === 'a'.repeat(32)),
    'its log lines still name the trace',
  );
});

t.test('no token, JWT or query value in any span', async (t) => {
  // a token misplaced in the query string (refused), a management request with a JWT, a 401
  await ctx.app.inject({ method: 'GET', url: `${PATH}&token=${token}`, headers });
  await ctx.app.inject({ method: 'GET', url: '/api/v1/api-tokens?page_size=7', headers: { authorization: `Bearer ${jwt}` } });
  await ctx.app.inject({ method: 'GET', url: PATH, headers: { authorization: `Bearer ${token}x` } });
  await tracing.flush();
  const spans = exporter.getFinishedSpans();
  t.ok(spans.length > 20, `${spans.length} spans`);
  const text = JSON.stringify(
    spans.map((span) => ({ name: span.name, attributes: span.attributes, status: span.status, events: span.events })),
  );
  t.notOk(text.includes(token), 'no token');
  t.notOk(text.includes(token.slice(4, 24)), 'not even part of one');
  t.notOk(text.includes(jwt), 'no JWT');
  t.notOk(text.includes(jwt.split('.')[1]!), "not even a JWT's claims");
  t.notOk(/page_size=|token=/.test(text), 'no query string');
  t.notOk(/Bearer /i.test(text), 'no Authorization header value');
});
