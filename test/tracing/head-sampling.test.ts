// Head sampling (src/tracing/head-sampling.ts) with nothing sampled (parentbased_traceidratio at
// 0): a request that starts a trace gets no span, no traceresponse header and no trace ids in its
// log lines, as with tracing off; one that brings a TRUST_PROXY caller's context is decided by
// the caller (parent-based): recorded with every child span when the caller sampled it, carried
// in its header and log lines but not exported when not.
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
const tracing = await startTracing(
  {
    url: 'http://127.0.0.1:9/v1/traces',
    protocol: 'http/json',
    headers: {},
    sampler: 'parentbased_traceidratio',
    ratio: 0,
    serviceName: 'coldtrack-test',
    resourceAttributes: {},
  },
  { trustProxy: [PROXY], exporter },
);
t.teardown(() => tracing.shutdown());
const ctx = await createTestApp(t, { REDIS_URL, TRUST_PROXY: PROXY }, { tracing });
const acme = await createCompany(ctx.db.pool, 'Acme');
const { headers } = await issueToken(ctx, acme.employeeId);
const PATH = '/api/v1/analytics/utilization?page_size=1';
const PARENT_ID = '00f067aa0ba902b7';

async function finishedSpans(): Promise<ReadableSpan[]> {
  await tracing.flush();
  return exporter.getFinishedSpans();
}
/** A request from the trusted proxy, with its caller's trace context: sampled (01) or not (00). */
const fromCaller = (traceId: string, flags: '00' | '01', requestId: string) =>
  ctx.app.inject({
    method: 'GET',
    url: PATH,
    headers: { ...headers, traceparent: `00-${traceId}-${PARENT_ID}-${flags}`, 'x-request-id': requestId },
    remoteAddress: PROXY,
  });
const logLinesOf = (requestId: string) =>
  ctx.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.reqId === requestId);

t.test('a new trace not sampled: no span, no header, no trace ids, as with tracing off', async (t) => {
  for (let i = 0; i < 5; i++) {
    const reply = await ctx.app.inject({ method: 'GET', url: PATH, headers: { ...headers, 'x-request-id': `new-${i}` } });
    t.equal(reply.statusCode, 200);
    t.equal(reply.headers.traceresponse, undefined, 'no traceresponse');
  }
  t.same(await finishedSpans(), [], 'nothing recorded: not the request, not its queries or Redis calls');
  const lines = logLinesOf('new-0');
  t.ok(lines.length >= 2, `${lines.length} log lines`);
  t.ok(
    lines.every((line) => line.trace_id === undefined),
    'no trace id in its log lines',
  );
});

t.test("a caller's sampled context from a TRUST_PROXY peer: recorded, with its children", async (t) => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const reply = await fromCaller(traceId, '01', 'joined');
  t.match(reply.headers.traceresponse, new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  const spans = (await finishedSpans()).filter((span) => span.spanContext().traceId === traceId);
  const request = spans.find((span) => span.name === 'GET /api/v1/analytics/utilization');
  t.equal(request?.parentSpanContext?.spanId, PARENT_ID, "the request under the caller's span");
  t.ok(
    spans.some((span) => span.name === 'token check' && span.parentSpanContext?.spanId === request?.spanContext().spanId),
    'its children follow the request span, whatever the ratio',
  );
  t.ok(logLinesOf('joined').every((line) => line.trace_id === traceId));
});

t.test("a caller's unsampled context: named in the header and log lines, not exported", async (t) => {
  exporter.reset();
  const traceId = 'b'.repeat(32);
  const reply = await fromCaller(traceId, '00', 'unsampled-caller');
  t.match(reply.headers.traceresponse, new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
  t.same(await finishedSpans(), []);
  t.ok(logLinesOf('unsampled-caller').every((line) => line.trace_id === traceId && line.trace_flags === '00'));
});
