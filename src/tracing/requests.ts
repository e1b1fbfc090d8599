// The request's span and what it brings to the rest of the request: @fastify/otel opens one span
// per traced HTTP request (its lifecycle hooks get no span of their own: a dozen spans a request
// for little); a request is traced when it starts a trace sampled at the head
// (src/tracing/head-sampling.ts) or brings a caller's trace context. Here its name and attributes
// are made safe and useful, the trace id goes into every log line of the request and into the
// `traceresponse` header, and a `traceparent` is honoured only from a TRUST_PROXY peer.
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { Span, TracerProvider } from '@opentelemetry/api';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { type FastifyPluginAsync, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import fp from 'fastify-plugin';

export interface RequestTracing {
  /** Registered first in buildApp, before any route. */
  plugin: FastifyPluginAsync;
  /** Fastify's logController: the "incoming request" line waits for the trace id. */
  logController: LogController;
  /** Called in rewriteUrl, before anything reads the headers: a traceparent from an untrusted peer is dropped. */
  dropUntrustedContext(request: IncomingMessage): void;
}

/** Scrapes and probes: no trace of their own (they would outnumber the requests an SRE looks for). */
const UNTRACED_PATHS = /^\/(?:metrics|healthz|readyz)(?:[/?]|$)/;

/** The peers TRUST_PROXY names, as Fastify reads the list (IPs and CIDRs; IPv4-mapped IPv6 as IPv4). */
export function trustedPeers(trustProxy: readonly string[]): (address: string | undefined) => boolean {
  if (trustProxy.length === 0) return () => false;
  const list = new BlockList();
  for (const entry of trustProxy) {
    const [address, bits] = entry.split('/') as [string, string | undefined];
    const family = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
  return (address) => {
    if (!address) return false;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    const bare = mapped ? mapped[1]! : address;
    return list.check(bare, isIP(bare) === 4 ? 'ipv4' : 'ipv6');
  };
}

/**
 * Fastify logs "incoming request" before any hook runs, before the request's span exists: that
 * line is written by the hook below instead, with the trace id. Framework errors (a malformed URL)
 * run no hook and keep theirs.
 */
class TracedLogController extends LogController {
  override incomingRequest(request: FastifyRequest, reply: FastifyReply) {
    if (request.params === null) super.incomingRequest(request, reply);
  }

  incomingRequestNow(request: FastifyRequest, reply: FastifyReply) {
    super.incomingRequest(request, reply);
  }
}

const flagsOf = (traceFlags: number) => (traceFlags & 0xff).toString(16).padStart(2, '0');

/** The log fields of the span the current code runs in (every line a request logs runs in its span's context). */
export function traceFieldsOf(span: Span | undefined): Record<string, string> | null {
  if (!span) return null;
  const { traceId, spanId, traceFlags } = span.spanContext();
  return { trace_id: traceId, span_id: spanId, trace_flags: flagsOf(traceFlags) };
}

const pathOf = (url: string) => {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
};

/**
 * @fastify/otel, told per request whether to trace it: a request not sampled at the head
 * (src/tracing/head-sampling.ts) gets no span, no context and nothing of the SDK, as if tracing
 * were off. Its onRequest hook asks isEnabled() first and does nothing more when false; the hook
 * registered just before it sets the answer for the request at hand, synchronously (both call
 * done() at once, so no other request runs in between), and the one just after it clears it.
 */
class HeadSampledInstrumentation extends FastifyOtelInstrumentation {
  skipThisRequest = false;

  override isEnabled() {
    return !this.skipThisRequest && super.isEnabled();
  }
}

export function requestTracing(
  provider: TracerProvider,
  options: { trustProxy: readonly string[]; sampleNewTrace: () => boolean },
): RequestTracing {
  const logController = new TracedLogController();
  const trusted = trustedPeers(options.trustProxy);
  const instrumentation = new HeadSampledInstrumentation({
    instrumentHooks: false,
    // nor does the handler: the request's span already covers it, and the wrapper costs every request
    instrumentHandler: false,
    // an error's message and stack stay in the logs; the span says which status it ended with
    recordExceptions: false,
    ignorePaths: ({ url }) => UNTRACED_PATHS.test(url),
    requestHook(span, request) {
      if (!span.isRecording()) return;
      // low-cardinality name; the path without its query string (a query value never reaches a span)
      span.updateName(`${request.method} ${request.routeOptions.url ?? '(no route)'}`);
      span.setAttribute('url.path', pathOf(request.url));
    },
  });
  instrumentation.setTracerProvider(provider);

  async function plugin(app: Parameters<FastifyPluginAsync>[0]) {
    // a caller's trace context (only a TRUST_PROXY peer's is left: dropUntrustedContext) is decided
    // by the SDK's sampler; a new trace here
    app.addHook('onRequest', (request, _reply, done) => {
      instrumentation.skipThisRequest = request.headers.traceparent === undefined && !options.sampleNewTrace();
      done();
    });
    await app.register(instrumentation.plugin());
    // after @fastify/otel's own onRequest hook, which opened the span (or not)
    app.addHook('onRequest', (request, reply, done) => {
      const traced = !instrumentation.skipThisRequest;
      instrumentation.skipThisRequest = false;
      const span = traced ? request.opentelemetry().span : null;
      if (span) {
        const { traceId, spanId, traceFlags } = span.spanContext();
        // W3C Trace Context Level 2: the trace this request joined, sampled or (a caller's) not
        void reply.header('traceresponse', `00-${traceId}-${spanId}-${flagsOf(traceFlags)}`);
      }
      logController.incomingRequestNow(request, reply);
      done();
    });
  }

  return {
    plugin: fp(plugin, { name: 'tracing' }),
    logController,
    dropUntrustedContext(request) {
      if (request.headers.traceparent === undefined && request.headers.tracestate === undefined) return;
      if (trusted(request.socket?.remoteAddress)) return;
      delete request.headers.traceparent;
      delete request.headers.tracestate;
    },
  };
}
