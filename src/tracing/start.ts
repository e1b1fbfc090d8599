// Tracing on: the OpenTelemetry SDK, loaded by src/http-server.ts with a dynamic import only when
// the configuration turns tracing on (src/config/tracing.ts), so that a service without it loads
// none of this. Every serving process (each cluster worker, or the one process) starts its own
// and exports its own spans; the cluster primary serves no request and exports nothing.
//
// The spans (docs/tracing.md, "What each span means"): one per HTTP request (@fastify/otel, in
// src/tracing/requests.ts), and under it the service's own at its few choke points, through the
// interfaces of src/tracing/spans.ts and src/db/query-tracing.ts rather than require/import-hook
// auto-instrumentation (docs/tracing.md says why). A child span is opened only under a span that
// records: an unsampled request costs one check per choke point, and background work (webhook
// sending, upkeep, flushes) opens none.
import { type Attributes, context, propagation, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

/** Which process sent a span: each cluster worker exports its own (semantic conventions' process.pid). */
const ATTR_PROCESS_PID = 'process.pid';
import type { TracingSettings } from '../config.js';
import { installQueryTracer } from '../db/query-tracing.js';
import { SecretScrubber } from './redaction.js';
import { installTraceFields } from '../logging.js';
import { headSampling } from './head-sampling.js';
import { type RequestTracing, requestTracing, traceFieldsOf } from './requests.js';
import { installSpanTools, type SpanAttributes, type SpanTools } from './spans.js';
import { recordThreadSpans, traceparentOf } from './thread-spans.js';
import { ThreadSpanExporter } from './export-thread.js';

export interface Tracing extends RequestTracing {
  /** Exports what is still batched (tests; a stop calls shutdown, which flushes too). */
  flush(): Promise<void>;
  /** Flushes, then uninstalls everything: the process traces nothing more. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** TRUST_PROXY: the only peers whose traceparent is honoured */
  trustProxy: readonly string[];
  /** Tests: an exporter of their own, in this thread, instead of OTLP from the export thread. */
  exporter?: SpanExporter;
}

const DB_SYSTEM = 'db.system.name';

/**
 * How long a stopping process waits for its last spans to be exported. The exporter's own timeout
 * (OTEL_EXPORTER_OTLP_TIMEOUT, 10 s) is too long for a stop: with the collector hung, every worker
 * of a rolling restart would wait it out (test/operations/tracing-collector-faults.test.ts).
 */
const LAST_EXPORT_MS = 2000;

function withDeadline(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the collector did not take the last spans within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
const errorType = (error: unknown) => String((error as { code?: unknown })?.code ?? (error as Error)?.name ?? 'Error');

export async function startTracing(settings: TracingSettings, options: TracingOptions): Promise<Tracing> {
  const sampling = headSampling(settings);
  const resourceAttributes = { ...settings.resourceAttributes, [ATTR_SERVICE_NAME]: settings.serviceName, [ATTR_PROCESS_PID]: process.pid };
  const exporter = options.exporter ?? new ThreadSpanExporter(settings, resourceAttributes);
  const provider = new TracerProvider({
    resource: resourceFromAttributes(resourceAttributes),
    sampler: sampling.sampler,
    // the scrubber first: it runs on every span before the batch takes it
    spanProcessors: [new SecretScrubber(), new BatchSpanProcessor({ exporter })],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer('coldtrack-api');
  // The current span, read from the context manager itself: every request asks at each choke point
  // (most answer "none", unsampled), and the API's context.active() looks the manager up in its
  // global registry, version check included, on every call.
  const activeContext = () => contextManager.active();
  const currentSpan = () => trace.getSpan(activeContext());

  const recording = () => currentSpan()?.isRecording() === true;
  /** A child of the current span, or null when there is none that records (unsampled, or no request). */
  const childOf = (name: string, attributes: Attributes, startTime?: number) => {
    const parent = activeContext();
    if (!trace.getSpan(parent)?.isRecording()) return null;
    const kind = attributes[DB_SYSTEM] ? SpanKind.CLIENT : SpanKind.INTERNAL;
    return { parent, span: tracer.startSpan(name, { kind, attributes, ...(startTime ? { startTime } : {}) }, parent) };
  };
  const failed = (span: Span, error: unknown) => {
    // the error's code or class, never its message (a message may quote a value)
    const type = errorType(error);
    span.setAttribute('error.type', type);
    span.setStatus({ code: SpanStatusCode.ERROR, message: type });
  };
  function around<T>(opened: ReturnType<typeof childOf>, work: () => Promise<T>): Promise<T> {
    if (!opened) return work();
    const { parent, span } = opened;
    return contextManager.with(trace.setSpan(parent, span), work).then(
      (result) => {
        span.end();
        return result;
      },
      (error: unknown) => {
        failed(span, error);
        span.end();
        throw error;
      },
    );
  }

  const tools: SpanTools = {
    inSpan: (name: string, attributes: SpanAttributes, work) => around(childOf(name, attributes), work),
    annotate(key, value) {
      currentSpan()?.setAttribute(key, value);
    },
    threadHop(name, attributes) {
      const opened = childOf(name, attributes);
      if (!opened) return null;
      const { span } = opened;
      return {
        traceparent: traceparentOf(span),
        end(spans, error) {
          if (spans) recordThreadSpans(tracer, span, spans);
          if (error !== undefined) failed(span, error);
          span.end();
        },
      };
    },
  };
  installSpanTools(tools);
  installTraceFields(() => traceFieldsOf(currentSpan()));
  installQueryTracer({
    recording,
    around: (label, work) => around(childOf(label, { [DB_SYSTEM]: 'postgresql', 'db.query.summary': label }), work),
  });

  const requests = requestTracing(provider, { trustProxy: options.trustProxy, sampleNewTrace: sampling.sampleNewTrace });
  return {
    ...requests,
    flush: () => provider.forceFlush(),
    async shutdown() {
      installSpanTools(null);
      installQueryTracer(null);
      installTraceFields(null);
      try {
        await withDeadline(provider.shutdown(), LAST_EXPORT_MS);
      } finally {
        trace.disable();
        propagation.disable();
        context.disable();
      }
    },
  };
}
