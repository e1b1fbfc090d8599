// Response compression for every route: brotli or gzip, whichever the client's Accept-Encoding
// prefers (brotli on a tie), for compressible bodies of at least COMPRESSION_THRESHOLD bytes. A
// 1,000-record page shrinks 7-18x; tiny bodies (errors, small pages) go as they are, since
// compressing them costs more CPU than the bytes it saves. Registered before any route: the
// compressor hooks in per route (onRoute), so routes registered earlier would not have it.
// A route whose answer carries a raw token (config.carriesSecret: create, rotate) is never
// compressed, whatever Accept-Encoding asks: a secret compressed beside text an attacker can
// influence leaks through the compressed length (BREACH). Defence in depth beside TLS; such an
// answer does not vary by Accept-Encoding, so it gets no Vary either.
import zlib from 'node:zlib';
import compress from '@fastify/compress';
import fp from 'fastify-plugin';
import type { App } from '../types.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The answer carries a raw token: never compressed. */
    carriesSecret?: boolean;
  }
}

/** Bodies below this many bytes are never compressed. */
export const COMPRESSION_THRESHOLD = 1024;

/**
 * The cheapest levels (bench/compression.ts, P11): a 1,000-reading sensor page costs the server
 * only ~1.5 ms of CPU, so the compressor's share decides req/s. On that page (120 KB) brotli 1
 * makes 6.9 KB in 0.10 ms and gzip 1 7.5 KB in 0.17 ms (17x and 16x); on a 600 KB revenue page
 * 80 and 83 KB (7.8x, 7.5x) in 1.0 and 1.7 ms. Measured, the server's CPU a sensor page rose
 * 0.2-0.3 ms with them; with brotli 3 and gzip 3 (5.5 and 7.1 KB) 0.4-0.45 ms, req/s 0.69-0.74x of
 * identity's at loopback; brotli 4 with gzip 6 (5.4 and 5.7 KB) cost more still. Brotli 11 takes
 * ~180 ms a page.
 */
export const BROTLI_QUALITY = 1;
export const GZIP_LEVEL = 1;

/**
 * Bodies up to this size (every 1,000-record page and /openapi.json) are compressed in one
 * synchronous call; bigger ones stream through zlib on libuv's thread pool. The stream path (the
 * library's choice above 8 KiB on 2 cores) cost ~1 ms more CPU than the compression itself on a
 * sensor page and ~3 ms more on a revenue page (4.5 ms against 1.3-1.9 ms in one call), and its
 * chunking and pipeline run on the event loop too. One call holds the event loop ~2 ms at most
 * (gzip 1 on 1 MB).
 */
export const SYNC_COMPRESSION_LIMIT = 1024 * 1024;

// what @fastify/compress compresses by default: JSON, text, XML (not event streams)
const COMPRESSIBLE = /^text\/(?!event-stream)|(?:\+|\/)json(?:;|$)|(?:\+|\/)text(?:;|$)|(?:\+|\/)xml(?:;|$)/u;

function addVary(value: unknown): string {
  const present = (Array.isArray(value) ? value.join(',') : String(value ?? '')).trim();
  if (/(^|,)\s*(accept-encoding|\*)\s*(,|$)/i.test(present)) return present;
  return present ? `${present}, accept-encoding` : 'accept-encoding';
}

async function compression(app: App) {
  // before the compressor's own onRoute hook, which reads route.compress
  app.addHook('onRoute', (route) => {
    if (route.config?.carriesSecret) route.compress = false;
  });
  await app.register(compress, {
    global: true,
    encodings: ['br', 'gzip'],
    threshold: COMPRESSION_THRESHOLD,
    customTypes: COMPRESSIBLE,
    brotliOptions: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
    zlibOptions: { level: GZIP_LEVEL },
    // request bodies (JSON, 64 KiB at most) are not decoded: an encoded one is refused, as before
    globalDecompression: false,
    syncThreshold: SYNC_COMPRESSION_LIMIT,
  });

  // A body big enough to be compressed varies with Accept-Encoding even when this client asked
  // for none: a shared cache must not hand the identity copy (or the brotli one) to everyone.
  // @fastify/compress adds Vary only to the responses it compresses; this covers the rest.
  // (callback style: synchronous, no promise per request; see src/plugins/http.ts)
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.routeOptions.config.carriesSecret) return done(null, payload);
    const type = String(reply.getHeader('content-type') ?? '');
    if (!COMPRESSIBLE.test(type) && !/javascript/.test(type)) return done(null, payload);
    const big =
      typeof payload === 'string'
        ? payload.length >= COMPRESSION_THRESHOLD || Buffer.byteLength(payload) >= COMPRESSION_THRESHOLD
        : Buffer.isBuffer(payload)
          ? payload.length >= COMPRESSION_THRESHOLD
          : payload !== null && payload !== undefined; // a stream: its size is not known up front
    if (big) reply.header('vary', addVary(reply.getHeader('vary')));
    done(null, payload);
  });
}

export default fp(compression, { name: 'compression' });
