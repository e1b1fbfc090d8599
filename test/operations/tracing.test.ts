// Tracing on a real 2-worker cluster (issue 45, "Done when"): an OTLP/HTTP receiver on a loopback
// port, written here (OTEL_EXPORTER_OTLP_PROTOCOL=http/json: the spans arrive as JSON), and a
// revenue page heavy enough for a rollup thread. One trace holds the request, the token check,
// Redis, PostgreSQL and the thread's work, with the trace id in the request's log lines and in its
// traceresponse header; both workers export; and no token or JWT is in any span.
import http from 'node:http';
import t from 'tap';
import { bearerOfNewToken, createWorld, freePort, send, startCluster, startRedis, until } from './harness.js';

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: Array<{ key: string; value: OtlpValue }>;
}
interface ReceivedSpan extends OtlpSpan {
  pid: string;
}

// the receiver: every export's body kept raw (searched for secrets) and its spans flattened
const bodies: string[] = [];
const spans: ReceivedSpan[] = [];
const receiver = http.createServer((request, response) => {
  let body = '';
  request.setEncoding('utf8');
  request.on('data', (chunk: string) => (body += chunk));
  request.on('end', () => {
    if (request.url === '/v1/traces' && request.method === 'POST') {
      bodies.push(body);
      const exported = JSON.parse(body) as {
        resourceSpans: Array<{
          resource: { attributes: Array<{ key: string; value: OtlpValue }> };
          scopeSpans: Array<{ spans: OtlpSpan[] }>;
        }>;
      };
      for (const { resource, scopeSpans } of exported.resourceSpans) {
        const pid = String(resource.attributes.find((attribute) => attribute.key === 'process.pid')?.value.intValue);
        for (const scope of scopeSpans) for (const span of scope.spans) spans.push({ ...span, pid });
      }
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
const receiverPort = await freePort();
await new Promise<void>((resolve) => receiver.listen(receiverPort, '127.0.0.1', resolve));
t.teardown(() => receiver.close());

const world = await createWorld(t);
const redis = await startRedis(t);
const cluster = await startCluster(t, {
  DATABASE_URL: world.databaseUrl,
  REDIS_URL: redis.url,
  OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiverPort}`,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
  OTEL_TRACES_SAMPLER_ARG: '1',
  OTEL_SERVICE_NAME: 'coldtrack-tracing-test',
});
const jwt = await world.jwt(world.acme.employeeId);
const token = await bearerOfNewToken(cluster.baseUrl, world.acme.employeeId, 'tracing');
const bearer = token.authorization!.slice('Bearer '.length);

const dayOf = (offsetDays: number) => new Date(Date.now() - offsetDays * 86_400_000).toISOString().slice(0, 10);
// 3 units x 150 days: past the inline limit (300 unit-days), the page goes to a rollup thread
const HEAVY = `/api/v1/analytics/revenue?start_date=${dayOf(155)}&end_date=${dayOf(5)}&page_size=1000`;

const attribute = (span: OtlpSpan | undefined, key: string) => {
  const value = span?.attributes?.find((each) => each.key === key)?.value;
  return value?.stringValue ?? value?.intValue ?? value?.boolValue ?? value?.doubleValue;
};
const traceIdOf = (header: unknown) => /^00-([0-9a-f]{32})-[0-9a-f]{16}-01$/.exec(String(header))?.[1];

t.test('one trace covers the request, the token check, Redis, PostgreSQL and the rollup thread', async (t) => {
  const reply = await send(cluster.baseUrl, HEAVY, { headers: { ...token, 'x-request-id': 'traced-heavy' }, timeoutMs: 20_000 });
  t.equal(reply.status, 200, 'the page');
  const traceId = traceIdOf(reply.headers.traceresponse);
  t.ok(traceId, `traceresponse names a sampled trace: ${reply.headers.traceresponse}`);
  // the batch leaves every 5 s
  const trace = await until('the trace exported', () => {
    const found = spans.filter((span) => span.traceId === traceId);
    return found.some((span) => span.name === 'rollup revenue compute') && found.length >= 8 ? found : false;
  });
  const named = (name: string) => trace.find((span) => span.name === name);
  const children = (parent: OtlpSpan | undefined) => trace.filter((span) => span.parentSpanId === parent?.spanId && parent);
  const request = named('GET /api/v1/analytics/revenue');
  t.ok(request, `the request span (${trace.map((span) => span.name).join(', ')})`);
  t.notOk(request?.parentSpanId, 'the root of its trace');
  t.equal(attribute(request, 'http.response.status_code'), 200);
  const check = named('token check');
  t.equal(check?.parentSpanId, request?.spanId, 'the token check under the request');
  t.ok(['hit', 'miss'].includes(String(attribute(check, 'coldtrack.token.cache'))), 'with its cache hit or miss');
  const underCheck = children(check).map((span) => span.name);
  t.ok(underCheck.includes('redis revocation check'), 'Redis: the revocation check');
  t.ok(underCheck.includes('redis rate-limit window'), "Redis: the token's rate limit");
  const hop = named('rollup revenue');
  t.ok(hop, 'the hop to the rollup thread, from the event loop');
  const onThread = named('rollup revenue on thread');
  t.equal(onThread?.parentSpanId, hop?.spanId, "the thread's work under the hop: the context went into the thread");
  t.ok(Number(attribute(onThread, 'thread.id')) > 0, 'on a worker thread');
  const threadParts = children(onThread).map((span) => span.name);
  t.ok(threadParts.includes('analytics-revenue.revenueCheckOuts'), "the thread's PostgreSQL query, by name");
  t.ok(threadParts.includes('rollup revenue compute'), 'and the rollup itself');
  t.equal(attribute(named('analytics-revenue.revenueCheckOuts'), 'db.system.name'), 'postgresql');
  t.ok(
    trace.some(
      (span) => attribute(span, 'db.system.name') === 'postgresql' && span.pid === request?.pid && !threadParts.includes(span.name),
    ),
    'PostgreSQL queries of the event loop too (the unit directory, the token)',
  );
  const lines = cluster.logs().filter((line) => line.reqId === 'traced-heavy');
  t.ok(lines.length >= 2, `${lines.length} log lines of the request`);
  t.ok(
    lines.every((line) => line.trace_id === traceId),
    'each carries the trace id',
  );
});

t.test('every cluster worker exports', async (t) => {
  const pids = await until(
    'spans from both workers',
    async () => {
      await Promise.all(Array.from({ length: 6 }, () => send(cluster.baseUrl, HEAVY, { headers: token, timeoutMs: 20_000 })));
      const seen = new Set(spans.map((span) => span.pid));
      return seen.size >= 2 ? seen : false;
    },
    30_000,
    500,
  );
  t.same([...pids].sort(), cluster.listeningPids().map(String).sort(), 'spans from each worker, by process.pid');
});

t.test('no token or JWT in any span', async (t) => {
  // a management call with the JWT, and the token misplaced in the query string (refused)
  t.equal((await send(cluster.baseUrl, '/api/v1/api-tokens', { headers: { authorization: `Bearer ${jwt}` } })).status, 200);
  t.equal((await send(cluster.baseUrl, `${HEAVY}&token=${bearer}`, { headers: token })).status, 400);
  const exported = spans.length;
  await until('their spans exported', () => spans.some((span) => span.name === 'GET /api/v1/api-tokens') && spans.length > exported);
  await until('the refused request exported', () =>
    spans.some((span) => span.name === 'GET /api/v1/analytics/revenue' && attribute(span, 'http.response.status_code') === 400),
  );
  const everything = bodies.join('\n');
  t.ok(spans.length > 30, `${spans.length} spans in ${bodies.length} exports`);
  t.notOk(everything.includes(bearer), 'no API token');
  t.notOk(everything.includes(bearer.slice(4, 24)), 'not even part of one');
  t.notOk(everything.includes(jwt), 'no JWT');
  t.notOk(everything.includes(jwt.split('.')[1]!), "not even a JWT's claims");
  t.notOk(/Bearer |start_date=|token=/.test(everything), 'no header value, no query string');
});
