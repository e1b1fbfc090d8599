// Tracing on while the OTLP collector is down (its port refuses) and then hung (it accepts and
// never answers), every request sampled: the requests are answered as fast as usual, whatever
// the exporter's connections do, and a stop still ends within its deadline with exit code 0 and
// a line saying the last spans were not sent. The collector is a TCP proxy to nowhere on a port
// of its own (test/helpers/tcp-proxy.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { bearerOfNewToken, createWorld, dataRequests, freePort, startCluster, statusCounts } from './harness.js';

const world = await createWorld(t);
const collector = new TcpProxy(await freePort(), { host: '127.0.0.1', port: await freePort() });
t.teardown(() => collector.refuse());
await collector.refuse();

const cluster = await startCluster(
  t,
  {
    DATABASE_URL: world.databaseUrl,
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`,
    OTEL_TRACES_SAMPLER: 'always_on',
    // the batch leaves every 500 ms: an export is in flight during the requests below
    OTEL_BSP_SCHEDULE_DELAY: '500',
  },
  { workers: 1 },
);
const headers = await bearerOfNewToken(cluster.baseUrl, world.acme.employeeId, 'collector-faults');

/** 3 rounds of 10 data requests at once, a second apart: all answered, and the slowest. */
async function rounds() {
  const replies = [];
  for (let round = 0; round < 3; round++) {
    replies.push(...(await dataRequests([cluster], 10, headers)).replies);
    await sleep(1000);
  }
  return { statuses: statusCounts(replies), slowest: Math.max(...replies.map((reply) => reply.ms)) };
}

t.test('the collector refuses: requests are answered', async (t) => {
  const { statuses, slowest } = await rounds();
  t.same(statuses, { 200: 30 }, 'every request answered');
  t.ok(slowest < 2000, `the slowest in ${Math.round(slowest)} ms`);
});

t.test('the collector hangs: requests are answered, the exports wait on their own', async (t) => {
  await collector.blackHole();
  const { statuses, slowest } = await rounds();
  t.same(statuses, { 200: 30 }, 'every request answered');
  t.ok(slowest < 2000, `the slowest in ${Math.round(slowest)} ms`);
  t.ok(collector.openSockets > 0, `the exporter's connections hang at the collector (${collector.openSockets} open)`);
});

t.test('a stop with the collector hung ends within its deadline, exit code 0', async (t) => {
  const signalledAt = performance.now();
  cluster.signal('SIGTERM');
  const { code } = await cluster.exited;
  const exitMs = performance.now() - signalledAt;
  t.equal(code, 0, `exit code 0, ${Math.round(exitMs)} ms after SIGTERM`);
  t.ok(exitMs < 8000, "the last export given up after 2 s, not the exporter's 10 s: well within the 15 s stop deadline");
  t.ok(
    cluster.logs().some((line) => line.msg === 'could not send the last spans'),
    'the lost spans are said',
  );
  t.notMatch(cluster.output(), /killed by timeout|died/, 'no worker was forced or counted as crashed');
});
