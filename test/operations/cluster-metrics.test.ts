// GET /metrics on any worker of the real cluster shows the whole cluster: the primary collects
// every worker's registry and sums them. The primary's own log lines are pino's, like the workers'.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { createWorld, DATA_PATH, metricSum, send, startCluster, startRedis, until } from './harness.js';

const world = await createWorld(t);
const redis = await startRedis(t);
const cluster = await startCluster(t, { DATABASE_URL: world.databaseUrl, REDIS_URL: redis.url });

t.test('/metrics from either worker sums both workers', async (t) => {
  const { headers } = await world.issue();
  const made = 40;
  const replies = await Promise.all(
    Array.from({ length: made }, (_, i) => send(cluster.baseUrl, DATA_PATH, { headers: { ...headers, 'x-request-id': `metrics-${i}` } })),
  );
  t.ok(
    replies.every((reply) => reply.status === 200),
    'all served',
  );
  const servedBy = await until(
    'every request in the logs',
    () => {
      const pids = replies.map((_, i) => cluster.pidOfRequest(`metrics-${i}`));
      return pids.every((pid) => pid !== undefined) && pids;
    },
    5000,
  );
  const perWorker = new Map<number, number>();
  for (const pid of servedBy) perWorker.set(pid!, (perWorker.get(pid!) ?? 0) + 1);
  t.equal(perWorker.size, 2, `both workers served: ${JSON.stringify(Object.fromEntries(perWorker))}`);

  // scrape several times on fresh connections: each lands on either worker, and each must show all
  const scraped = new Set<number>();
  for (let i = 0; i < 4; i++) {
    const scrape = await send(cluster.baseUrl, '/metrics', { headers: { 'x-request-id': `scrape-${i}` } });
    t.equal(scrape.status, 200, `scrape ${i} answers`);
    t.ok(scrape.ms < 2000, `scrape ${i} took ${Math.round(scrape.ms)} ms`);
    t.match(scrape.headers['content-type'], /text\/plain/);
    const counted = metricSum(scrape.body, 'http_request_duration_seconds_count', {
      route: '/api/v1/analytics/utilization',
      status: '200',
    });
    t.ok(counted >= made, `scrape ${i}: the cluster counted ${counted} data requests, at least the ${made} made`);
    const pid = await until('the scrape in the logs', () => cluster.pidOfRequest(`scrape-${i}`), 5000);
    scraped.add(pid);
  }
  t.comment(`scrapes answered by worker(s) ${[...scraped].join(', ')}`);
  t.equal(scraped.size, 2, 'scrapes were answered by both workers');
});

t.test('the cluster metrics name the rate-limit and pool series once, summed', async (t) => {
  const scrape = await send(cluster.baseUrl, '/metrics');
  t.equal(scrape.status, 200);
  for (const name of ['rate_limit_redis_fallbacks_total', 'db_pool_connections', 'nodejs_eventloop_lag_p99_seconds']) {
    t.equal(
      scrape.body.split('\n').filter((line) => line === `# TYPE ${name} ${name.endsWith('_total') ? 'counter' : 'gauge'}`).length,
      1,
      `${name} appears once`,
    );
  }
});

t.test('the event-loop delay histogram adds up the samples of every worker', async (t) => {
  const count = async () => {
    const scrape = await send(cluster.baseUrl, '/metrics');
    t.equal(scrape.body.split('\n').filter((line) => line === '# TYPE event_loop_delay_seconds histogram').length, 1, 'one histogram');
    return { samples: metricSum(scrape.body, 'event_loop_delay_seconds_count'), at: performance.now() };
  };
  const before = await count();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const after = await count();
  // a worker samples every 10 ms at most: more than one worker's in the time is both workers'
  const oneWorkerAtMost = (after.at - before.at) / 10;
  t.ok(
    after.samples - before.samples > oneWorkerAtMost,
    `${after.samples - before.samples} samples in ${Math.round(after.at - before.at)} ms: more than one worker takes (${Math.round(oneWorkerAtMost)})`,
  );
});

t.test(
  'every worker runs under the heap policy (config.ts heapFlags, mallocEnv): V8 collects near the live data, glibc gives large buffers back',
  async (t) => {
    const pids = cluster.workerPids();
    t.equal(pids.length, 2);
    for (const pid of pids) {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      t.ok(argv.includes('--max-old-space-size=512'), `worker ${pid}: ${argv.join(' ')}`);
      t.ok(argv.includes('--max-semi-space-size=8'), `worker ${pid} semi-spaces`);
      t.ok(argv.includes('--no-allocation-site-pretenuring'), `worker ${pid}: no pretenuring`);
      const environment = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      t.ok(environment.includes('MALLOC_MMAP_THRESHOLD_=131072'), `worker ${pid}: a fixed mmap threshold`);
    }
  },
);

// last: it replaces a worker the tests above counted on
t.test('a worker killed and replaced is counted by the primary in cluster_worker_restarts_total', async (t) => {
  const restarts = async () => metricSum((await send(cluster.baseUrl, '/metrics')).body, 'cluster_worker_restarts_total');
  t.equal(await restarts(), 0, 'none yet: the series is there at 0 from the start');
  const rollingBefore = cluster.listeningPids().length;
  const [victim] = cluster.workerPids();
  process.kill(victim!, 'SIGKILL');
  await until(
    'the replacement worker listening',
    () => cluster.listeningPids().length > rollingBefore && cluster.workerPids().length === 2,
    30_000,
    100,
  );
  t.equal(await restarts(), 1, 'one restart counted, whichever worker answers the scrape');
  t.equal(
    (await send(cluster.baseUrl, '/metrics')).body.split('\n').filter((line) => line === '# TYPE cluster_worker_restarts_total counter')
      .length,
    1,
    'named once',
  );
});

// after the test above: its replacement is what the primary logged
t.test("the primary's log lines carry time and pid, as the workers' lines do", async (t) => {
  const primaryLines = cluster.logs().filter((line) => line.role === 'primary');
  const replaced = primaryLines.find((line) => / died \(SIGKILL\); replacing it in \d+ ms$/.test(line.msg ?? ''));
  t.ok(replaced, `the primary logged the replacement (${JSON.stringify(primaryLines)})`);
  t.equal(replaced?.pid, cluster.pid, "pid: the primary's own");
  t.type(replaced?.time, 'number', 'time: epoch milliseconds, as pino writes it');
  t.ok(Math.abs(Number(replaced?.time) - Date.now()) < 120_000, 'a time of this run');
  t.equal(replaced?.level, 40, 'warn');
  const worker = cluster.logs().find((line) => line.msg?.startsWith('Server listening at'));
  t.same(
    Object.keys(replaced ?? {})
      .sort()
      .filter((key) => !['msg', 'role'].includes(key)),
    ['hostname', 'level', 'pid', 'time'],
    'pino base fields',
  );
  t.same(
    ['hostname', 'level', 'pid', 'time'].filter((key) => key in (worker ?? {})),
    ['hostname', 'level', 'pid', 'time'],
    "the same base fields as a worker's line",
  );
});
