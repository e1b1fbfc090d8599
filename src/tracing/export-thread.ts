// The span exporter of a serving process: the batches go to workers/trace-export-thread.ts, which
// posts them to the collector, instead of being posted from the event loop.
//
// Why a thread: the OTLP/HTTP exporter posts with Node's HTTP client, and Node's HTTP server and
// client share their code (OutgoingMessage, the parser's callbacks, the socket streams). A process
// that serves requests and also exports from the same V8 isolate gives that code a second kind of
// object to handle: V8 deoptimizes the server's optimized functions and compiles them again for
// both, and every request served afterwards runs the slower code, not only the 1 % that are
// traced (node --trace-deopt names the functions: docs/tracing.md, "How it is built"). On a thread
// of its own the exporter has its own isolate and its own compiled code. The batching, its limits and the span processors
// stay here; only plain data crosses (a batch of up to 512 spans every 5 s by default).
import { Worker } from 'node:worker_threads';
import type { SpanContext } from '@opentelemetry/api';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import type { TracingSettings } from '../config.js';
import type { ExportReply, ExportRequest, ExportThreadData, PlainSpan, PlainSpanContext } from '../../workers/trace-export-thread.js';
import { threadFileFor } from '../thread-file.js';

/** The thread's module beside this one's: .ts under the test hooks, .js in the build. */
export const exportThreadFile = (moduleUrl: string = import.meta.url): URL => threadFileFor(moduleUrl, 'trace-export-thread');

const plainContext = ({ traceState, ...context }: SpanContext): PlainSpanContext =>
  traceState === undefined ? context : { ...context, traceState: traceState.serialize() };

/** The span as plain data: what the exporter reads of it, nothing it does not. */
export function plainSpan(span: ReadableSpan): PlainSpan {
  return {
    name: span.name,
    kind: span.kind,
    spanContext: plainContext(span.spanContext()),
    ...(span.parentSpanContext ? { parentSpanContext: plainContext(span.parentSpanContext) } : {}),
    startTime: span.startTime,
    endTime: span.endTime,
    status: span.status,
    attributes: span.attributes,
    links: span.links.map((link) => ({ ...link, context: plainContext(link.context) })),
    events: span.events,
    duration: span.duration,
    ended: span.ended,
    instrumentationScope: span.instrumentationScope,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}

export class ThreadSpanExporter implements SpanExporter {
  readonly #thread: Worker;
  readonly #waiting = new Map<number, (reply: ExportReply) => void>();
  #nextId = 1;
  #gone: string | null = null;

  constructor(settings: Pick<TracingSettings, 'url' | 'protocol' | 'headers'>, resourceAttributes: ExportThreadData['resourceAttributes']) {
    const data: ExportThreadData = { url: settings.url, protocol: settings.protocol, headers: settings.headers, resourceAttributes };
    this.#thread = new Worker(exportThreadFile(), { workerData: data, name: 'trace-export' });
    // the server, not the exporter, keeps the process alive; a stop waits for the last batch itself
    this.#thread.unref();
    this.#thread.on('message', (reply: ExportReply) => {
      const settle = this.#waiting.get(reply.id);
      this.#waiting.delete(reply.id);
      settle?.(reply);
    });
    const lost = (why: string) => {
      this.#gone = why;
      for (const settle of this.#waiting.values()) settle({ id: 0, code: ExportResultCode.FAILED, error: why });
      this.#waiting.clear();
    };
    this.#thread.on('error', (error) => lost(`the export thread failed: ${error.name}`));
    this.#thread.on('exit', (code) => lost(`the export thread ended (exit code ${code})`));
  }

  #ask(request: ExportRequest): Promise<ExportReply> {
    if (this.#gone) return Promise.resolve({ id: request.id, code: ExportResultCode.FAILED, error: this.#gone });
    return new Promise((settle) => {
      this.#waiting.set(request.id, settle);
      this.#thread.postMessage(request);
    });
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    void this.#ask({ id: this.#nextId++, kind: 'export', spans: spans.map(plainSpan) }).then(({ code, error }) =>
      resultCallback(
        code === ExportResultCode.SUCCESS ? { code } : { code: ExportResultCode.FAILED, error: new Error(error ?? 'export failed') },
      ),
    );
  }

  async forceFlush(): Promise<void> {
    await this.#ask({ id: this.#nextId++, kind: 'flush' });
  }

  async shutdown(): Promise<void> {
    try {
      await this.#ask({ id: this.#nextId++, kind: 'shutdown' });
    } finally {
      await this.#thread.terminate();
    }
  }
}
