// The OTLP exporter of one serving process, on a thread of its own (src/tracing/export-thread.ts
// says why). The process's batch span processor hands each batch over as plain data; here the
// spans are given back the shape the exporter reads (their context as a function, the process's
// resource) and go to the collector through OpenTelemetry's own OTLP/HTTP exporter, with its
// timeout, retries and OTEL_EXPORTER_OTLP_* settings unchanged. Imports nothing of src/.
//
// node:http and node:https are imported here although nothing below names them: the exporter
// imports them itself, as ES modules, on its first export, and an ES module of Node's http builds
// its facade by reading every export, one of which loads Node's bundled undici. Imported here,
// that is paid while the process starts, not at the first export, which comes a few seconds into
// serving traffic (bench P19 measures what tracing costs the workers).
import 'node:http';
import 'node:https';
import { parentPort, workerData } from 'node:worker_threads';
import type { Attributes, Link, SpanContext } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';

/** What the thread starts with: where and how to export, and the process's resource. */
export interface ExportThreadData {
  url: string;
  protocol: 'http/protobuf' | 'http/json';
  headers: Record<string, string>;
  resourceAttributes: Attributes;
}

/** A span context as plain data: its trace state serialized (a TraceState does not survive a structured clone). */
export type PlainSpanContext = Omit<SpanContext, 'traceState'> & { traceState?: string };

/** A finished span as plain data, what postMessage can carry. */
export type PlainSpan = Omit<ReadableSpan, 'spanContext' | 'parentSpanContext' | 'links' | 'resource'> & {
  spanContext: PlainSpanContext;
  parentSpanContext?: PlainSpanContext;
  links: (Omit<Link, 'context'> & { context: PlainSpanContext })[];
};

export type ExportRequest = { id: number; kind: 'export'; spans: PlainSpan[] } | { id: number; kind: 'flush' | 'shutdown' };

/** The answer to request `id`: the ExportResultCode of an export (SUCCESS 0 for a flush or shutdown), and why it failed. */
export interface ExportReply {
  id: number;
  code: number;
  error?: string;
}

const revived = ({ traceState, ...context }: PlainSpanContext): SpanContext =>
  traceState === undefined ? context : { ...context, traceState: new TraceState(traceState) };

function exportSpans(port: NonNullable<typeof parentPort>, settings: ExportThreadData) {
  const options = { url: settings.url, headers: settings.headers };
  const exporter: SpanExporter = settings.protocol === 'http/json' ? new OtlpJsonExporter(options) : new OtlpProtobufExporter(options);
  // one resource for every span: the exporter groups spans by the resource object
  const resource = resourceFromAttributes(settings.resourceAttributes);
  const spanOf = (plain: PlainSpan): ReadableSpan => {
    const context = revived(plain.spanContext);
    return {
      ...plain,
      spanContext: () => context,
      parentSpanContext: plain.parentSpanContext && revived(plain.parentSpanContext),
      links: plain.links.map((link) => ({ ...link, context: revived(link.context) })),
      resource,
    };
  };
  const answer = (id: number, code: number, error?: unknown) =>
    port.postMessage({
      id,
      code,
      ...(error === undefined ? {} : { error: String((error as Error)?.message ?? error) }),
    } satisfies ExportReply);

  port.on('message', (request: ExportRequest) => {
    if (request.kind === 'export') {
      exporter.export(request.spans.map(spanOf), (result) => answer(request.id, result.code, result.error));
      return;
    }
    const done = request.kind === 'flush' ? (exporter.forceFlush?.() ?? Promise.resolve()) : exporter.shutdown();
    done.then(
      () => answer(request.id, 0),
      (error: unknown) => answer(request.id, 1, error),
    );
  });
}

if (parentPort) exportSpans(parentPort, workerData as ExportThreadData);
