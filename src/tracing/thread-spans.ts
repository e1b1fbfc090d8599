// The spans of a rollup thread's work. The thread loads no OpenTelemetry (its own SDK, exporter
// and batch per thread would cost memory on every thread and lose what is batched when Piscina
// ends a thread): it receives the hop's W3C traceparent with its task, times its own work, and
// hands the timings back with the records (workers/rollup-thread.ts). They are recorded here, on
// the main thread, as spans under the hop: the thread's task, then its queries and the rollup.
import { ROOT_CONTEXT, SpanKind, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { ThreadSpan } from '../../workers/rollup-thread.js';

/** The span's context as a W3C traceparent header value. */
export function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The thread's first span under `hop`, the others under the first (epoch ms, the thread's own clock readings). */
export function recordThreadSpans(tracer: Tracer, hop: Span, spans: readonly ThreadSpan[]) {
  const [task, ...parts] = spans;
  if (!task) return;
  const record = (parent: Span, { name, startMs, endMs, attributes }: ThreadSpan) => {
    const kind = 'db.system.name' in attributes ? SpanKind.CLIENT : SpanKind.INTERNAL;
    const span = tracer.startSpan(name, { kind, attributes, startTime: startMs }, trace.setSpan(ROOT_CONTEXT, parent));
    span.end(endMs);
    return span;
  };
  const taskSpan = record(hop, task);
  for (const part of parts) record(taskSpan, part);
}
