// The export thread (src/tracing/export-thread.ts, workers/trace-export-thread.ts): a span handed
// over as plain data reaches an OTLP/HTTP receiver whole (its parent, trace state, attributes,
// events, links and the process's resource); a collector's refusal comes back as a failed export;
// once the thread has ended, an export fails at once instead of waiting.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, trace, TraceFlags } from '@opentelemetry/api';
import { ExportResultCode, TraceState } from '@opentelemetry/core';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { resourceFromAttributes } from '@opentelemetry/resources';
import t from 'tap';
import { ThreadSpanExporter } from '../../src/tracing/export-thread.js';

type OtlpJson = {
  resourceSpans: {
    resource: { attributes: { key: string; value: { stringValue?: string } }[] };
    scopeSpans: { scope: { name: string }; spans: Record<string, unknown>[] }[];
  }[];
};

const received: OtlpJson[] = [];
const tenants: (string | string[] | undefined)[] = [];
let status = 200;
const receiver = createServer((request: IncomingMessage, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    tenants.push(request.headers['x-tenant']);
    received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpJson);
    response.writeHead(status, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise<void>((listening) => receiver.listen(0, '127.0.0.1', listening));
t.teardown(() => receiver.close());
const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;
const settings = { url, protocol: 'http/json', headers: { 'x-tenant': 'cold' } } as const;

/** One finished span with a parent that carries a trace state, an event and a link. */
function finishedSpan(): ReadableSpan {
  const finished = new InMemorySpanExporter();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'here' }),
    spanProcessors: [new SimpleSpanProcessor({ exporter: finished })],
  });
  const parent = trace.setSpanContext(context.active(), {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
    traceState: new TraceState('vendor=value'),
  });
  const linked = { traceId: '1af7651916cd43dd8448eb211c80319c', spanId: 'c7ad6b7169203331', traceFlags: TraceFlags.SAMPLED };
  const span = provider
    .getTracer('coldtrack-test')
    .startSpan(
      'GET /api/v1/analytics/revenue',
      { attributes: { 'http.route': '/api/v1/analytics/revenue', rows: 10 }, links: [{ context: linked }] },
      parent,
    );
  span.addEvent('page cut', { records: 3 });
  span.end();
  return finished.getFinishedSpans()[0]!;
}

const exportOne = (exporter: ThreadSpanExporter, span: ReadableSpan) =>
  new Promise<{ code: number; error?: Error }>((settle) => exporter.export([span], settle));

t.test('a span crosses to the thread and reaches the receiver whole', async (t) => {
  const exporter = new ThreadSpanExporter(settings, { 'service.name': 'coldtrack-api', 'process.pid': process.pid });
  t.teardown(() => exporter.shutdown());
  const span = finishedSpan();
  const result = await exportOne(exporter, span);
  t.equal(result.code, ExportResultCode.SUCCESS);
  t.equal(received.length, 1, 'one request to the receiver');
  t.same(tenants, ['cold'], 'with the OTLP headers');
  const [resourceSpans] = received[0]!.resourceSpans;
  const resource = Object.fromEntries(resourceSpans!.resource.attributes.map(({ key, value }) => [key, value]));
  t.same(resource['service.name'], { stringValue: 'coldtrack-api' }, "the process's resource, not the span's provider's");
  t.ok(resource['process.pid'], 'the pid');
  t.equal(resourceSpans!.scopeSpans[0]!.scope.name, 'coldtrack-test');
  const exported = resourceSpans!.scopeSpans[0]!.spans[0]!;
  t.match(exported, {
    name: 'GET /api/v1/analytics/revenue',
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: span.spanContext().spanId,
    parentSpanId: 'b7ad6b7169203331',
    traceState: 'vendor=value',
    events: [{ name: 'page cut', attributes: [{ key: 'records', value: { intValue: 3 } }] }],
    links: [{ traceId: '1af7651916cd43dd8448eb211c80319c', spanId: 'c7ad6b7169203331' }],
  });
  t.same(
    (exported.attributes as { key: string }[]).map(({ key }) => key),
    ['http.route', 'rows'],
  );
  t.same(BigInt(exported.startTimeUnixNano as string) <= BigInt(exported.endTimeUnixNano as string), true, 'its times');
});

t.test("the collector's refusal is a failed export", async (t) => {
  const exporter = new ThreadSpanExporter(settings, {});
  t.teardown(() => exporter.shutdown());
  status = 400;
  t.teardown(() => (status = 200));
  const result = await exportOne(exporter, finishedSpan());
  t.equal(result.code, ExportResultCode.FAILED);
  t.ok(result.error instanceof Error, `why: ${result.error?.message}`);
});

t.test('after the thread has ended, an export fails at once', async (t) => {
  const exporter = new ThreadSpanExporter(settings, {});
  await exporter.shutdown();
  const before = received.length;
  const result = await exportOne(exporter, finishedSpan());
  t.equal(result.code, ExportResultCode.FAILED);
  t.match(result.error?.message, /export thread ended/);
  t.equal(received.length, before, 'nothing sent');
});
