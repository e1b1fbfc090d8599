// The spans the service's own code opens (the token check, the Redis calls, the hop to a rollup
// thread), written against this small interface rather than OpenTelemetry's: with tracing off
// (docs/tracing.md) nothing installs an implementation, each call is one null check, and no
// OpenTelemetry module is ever loaded. src/tracing/start.ts installs the real one when it is on.
import type { ThreadSpan } from '../../workers/rollup-thread.js';

export type SpanAttributes = Readonly<Record<string, string | number | boolean>>;

/** A span around work on another thread: the context to carry, and how to record what the thread reports. */
export interface ThreadHop {
  /** W3C traceparent of the hop's span, for the thread to report its spans under */
  readonly traceparent: string;
  /** Ends the hop; `spans` are the thread's, timed by the thread itself (epoch milliseconds). */
  end(spans: readonly ThreadSpan[] | undefined, error?: unknown): void;
}

export interface SpanTools {
  inSpan<T>(name: string, attributes: SpanAttributes, work: () => Promise<T>): Promise<T>;
  /** Sets an attribute on the span of the code that calls it, if any. */
  annotate(key: string, value: string | number | boolean): void;
  /** Null when the request is not sampled: the thread then times nothing. */
  threadHop(name: string, attributes: SpanAttributes): ThreadHop | null;
}

let tools: SpanTools | null = null;

export function installSpanTools(installed: SpanTools | null) {
  tools = installed;
}

/** `work` in a child span of the current one; just `work()` with tracing off. */
export function inSpan<T>(name: string, attributes: SpanAttributes, work: () => Promise<T>): Promise<T> {
  return tools === null ? work() : tools.inSpan(name, attributes, work);
}

export function annotateSpan(key: string, value: string | number | boolean) {
  tools?.annotate(key, value);
}

export function threadHop(name: string, attributes: SpanAttributes): ThreadHop | null {
  return tools === null ? null : tools.threadHop(name, attributes);
}
