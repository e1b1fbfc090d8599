// P19's loopback OTLP/HTTP sink: answers every POST /v1/traces 200 at once and counts the exports,
// their bytes and spans (proof tracing was on), in http/protobuf (the service's default, read with
// protobufjs's Reader: resource_spans = 1, scope_spans = 2, spans = 2) or http/json.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs/minimal.js';

export interface TraceSink {
  /** the base URL for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter appends /v1/traces) */
  url: string;
  readonly requests: number;
  readonly bytes: number;
  readonly spans: number;
  /** bodies that could not be read as OTLP (still answered 200: the figure is the sink's, not the service's) */
  readonly unreadable: number;
  close(): Promise<void>;
}

const LENGTH_DELIMITED = 2;

/** The length-delimited occurrences of one field of a protobuf message, as their bytes. */
function fieldMessages(message: Uint8Array, field: number): Uint8Array[] {
  const reader = protobuf.Reader.create(message);
  const found: Uint8Array[] = [];
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    if (tag >>> 3 === field && (tag & 7) === LENGTH_DELIMITED) found.push(reader.bytes());
    else reader.skipType(tag & 7);
  }
  return found;
}

/** Spans in an OTLP ExportTraceServiceRequest, protobuf-encoded. */
export function spansInProtobuf(body: Uint8Array): number {
  let spans = 0;
  for (const resourceSpans of fieldMessages(body, 1)) {
    for (const scopeSpans of fieldMessages(resourceSpans, 2)) spans += fieldMessages(scopeSpans, 2).length;
  }
  return spans;
}

/** Spans in an OTLP ExportTraceServiceRequest, JSON-encoded. */
export function spansInJson(body: string): number {
  const request = JSON.parse(body) as { resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[] };
  return (request.resourceSpans ?? []).reduce(
    (sum, resource) => sum + (resource.scopeSpans ?? []).reduce((inner, scope) => inner + (scope.spans?.length ?? 0), 0),
    0,
  );
}

export async function startTraceSink(): Promise<TraceSink> {
  let requests = 0;
  let bytes = 0;
  let spans = 0;
  let unreadable = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      const sent = Buffer.concat(chunks);
      const json = (request.headers['content-type'] ?? '').startsWith('application/json');
      requests++;
      bytes += sent.length;
      try {
        // OTEL_EXPORTER_OTLP_COMPRESSION=gzip: counted as sent, read unpacked
        const body = request.headers['content-encoding'] === 'gzip' ? gunzipSync(sent) : sent;
        spans += json ? spansInJson(body.toString('utf8')) : spansInProtobuf(body);
      } catch {
        unreadable++;
      }
      // an empty ExportTraceServiceResponse: full success, in the request's own encoding
      if (json) response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    get bytes() {
      return bytes;
    },
    get spans() {
      return spans;
    },
    get unreadable() {
      return unreadable;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
