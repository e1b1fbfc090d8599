// The alerting rules and the dashboard against the real thing: a real Prometheus (Debian's
// prometheus) scrapes a real 2-worker cluster every second and evaluates ops/prometheus/*.yml
// every second (a copy with 3 s `for:` and 10 s / 30 s ranges for the 1 m / 5 m ones, so it runs
// in seconds: test/ops/prometheus-server.ts). The cluster runs on a private PostgreSQL with
// TimescaleDB (so the sensor policy series exist) and a private Redis, under a steady trickle of
// partner and employee requests. The test stops that PostgreSQL, sees ColdtrackDatabaseUnavailable
// go pending and firing through Prometheus's HTTP API, starts PostgreSQL again and sees it
// resolve, printing the timeline; then it runs every query of every dashboard panel against that
// Prometheus. Every process is killed in teardown (and by the reaper if this process dies first).
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import pg from 'pg';
import { mintEmployeeJwt } from '../../src/auth/jwt.js';
import { TEST_JWT_SECRET } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { startPrivatePostgres } from '../helpers/pg-private.js';
import { ensureTimescaleServer } from '../helpers/timescale.js';
import { ALL_SCOPES } from '../helpers/tokens.js';
import { type Reply, send, startCluster, startRedis, until } from '../operations/harness.js';
import { DASHBOARD, exportedNames, metricNames, recordedNames, recordingRules } from './promql.js';
import { FOR_IN_TEST, startPrometheus } from './prometheus-server.js';

const ALERT = 'ColdtrackDatabaseUnavailable';
const started = Date.now();
const processStart = performance.timeOrigin;
const timeline: { at: number; what: string }[] = [];
const mark = (what: string, at = Date.now()) => timeline.push({ at, what });

// TimescaleDB installed into the machine's PostgreSQL 15 (the private server preloads it)
await ensureTimescaleServer();
const postgres = await startPrivatePostgres(t, { timescale: true });
{
  const admin = new pg.Client({ connectionString: postgres.url() });
  await admin.connect();
  await admin.query('CREATE DATABASE coldtrack');
  await admin.end();
}
const databaseUrl = postgres.url('coldtrack');
const redis = await startRedis(t);
mark('private PostgreSQL (TimescaleDB) and Redis up');
// Prometheus starts beside the cluster (whose primary migrates the empty database, timescale
// profile, before forking the workers), and scrapes it once it listens
const [cluster, prometheus] = await Promise.all([
  startCluster(t, { DATABASE_URL: databaseUrl, REDIS_URL: redis.url, SENSOR_STORAGE: 'timescale' }, { workers: 2, timeoutMs: 90_000 }).then(
    (started) => (mark('2-worker cluster listening'), started),
  ),
  startPrometheus(t).then((started) => (mark(`Prometheus up (evaluation every 1 s; rules' for: ${FOR_IN_TEST})`), started)),
]);
await prometheus.scrape(`127.0.0.1:${cluster.port}`);
mark('Prometheus scrapes the cluster every 1 s');

// a company, an employee and six API tokens, made as an employee would, on the cluster itself
const fixtures = new pg.Pool({ connectionString: databaseUrl, max: 1 });
const acme = await createCompany(fixtures, 'Acme');
await fixtures.end();
const jwt = { authorization: `Bearer ${await mintEmployeeJwt({ secret: TEST_JWT_SECRET, userId: acme.employeeId, ttlSeconds: 3600 })}` };
const tokens: Record<string, string>[] = [];
for (let i = 0; i < 6; i++) {
  const reply = await send(cluster.baseUrl, '/api/v1/api-tokens', {
    method: 'POST',
    headers: jwt,
    body: { name: `traffic ${i}`, scopes: ALL_SCOPES, cooling_unit_ids: [], expires_at: null },
  });
  if (reply.status !== 201) throw new Error(`token creation: ${reply.status} ${reply.body}`);
  tokens.push({ authorization: `Bearer ${reply.json<{ token: string }>().token}` });
}

// Steady traffic over the routes the dashboard shows: two lanes, a request every 250 ms each
// (data requests stay under each token's 100 a minute, so an outage shows as 503, not 429).
const DATA_PATHS = [
  '/api/v1/analytics/utilization?page_size=1',
  '/api/v1/analytics/users?page_size=1',
  '/api/v1/analytics/revenue?page_size=1',
  `/api/v1/sensor-data?cooling_unit_id=${acme.unitIds[0]}&start_date=2026-03-01&end_date=2026-03-01&page_size=1`,
];
const replies: { at: number; path: string; status: number }[] = [];
let trafficRunning = true;
let turn = 0;
async function lane() {
  while (trafficRunning) {
    const i = turn++;
    // one management request in five, then each data route in turn
    const [path, headers] = i % 5 === 4 ? ['/api/v1/api-tokens', jwt] : [DATA_PATHS[i % 5]!, tokens[i % tokens.length]!];
    const reply: Reply | null = await send(cluster.baseUrl, path, { headers, timeoutMs: 15_000 }).catch(() => null);
    replies.push({ at: Date.now(), path, status: reply?.status ?? 0 });
    await sleep(250);
  }
}
const lanes = [lane(), lane()];
t.teardown(async () => {
  trafficRunning = false;
  await Promise.all(lanes);
});

const statusesSince = (since: number) => {
  const counts: Record<number, number> = {};
  for (const reply of replies) if (reply.at >= since) counts[reply.status] = (counts[reply.status] ?? 0) + 1;
  return counts;
};
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

t.test('PostgreSQL stopped: ColdtrackDatabaseUnavailable fires through Prometheus; started again: it resolves', async (t) => {
  await until(
    'the target scraped and the recording rules evaluated',
    async () => {
      const { activeTargets } = await prometheus.api<{ activeTargets: { health: string }[] }>('targets');
      const recorded = await prometheus.query('job_route:http_requests:rate1m');
      return activeTargets[0]?.health === 'up' && (recorded.data?.result.length ?? 0) > 0;
    },
    45_000,
    250,
  );
  mark('target up; job_route:http_requests:rate1m recorded');
  // every route of the traffic served (and so in the metrics) before the database goes
  const served = (path: string) => replies.some((reply) => reply.path === path && reply.status === 200);
  await until('every route of the traffic served once', () => [...DATA_PATHS, '/api/v1/api-tokens'].every(served), 45_000, 100).catch(
    () => undefined,
  );
  for (const path of [...DATA_PATHS, '/api/v1/api-tokens']) t.ok(served(path), `served before the outage: ${path.split('?')[0]}`);
  // (a 503 the busy machine caused before the outage, a lookup past its 3 s deadline, would make
  // it pending: it must be quiet before the database goes)
  await until(
    `${ALERT} inactive before the outage`,
    async () => !(await prometheus.alerts()).some((alert) => alert.labels.alertname === ALERT),
    45_000,
    250,
  );
  t.comment(`statuses before the outage: ${JSON.stringify(statusesSince(0))}`);

  const stopAt = Date.now();
  mark('stopping PostgreSQL (pg_ctl stop -m fast: every session cut)');
  await postgres.stop();
  mark('PostgreSQL down');

  let pendingAt: number | null = null;
  const firing = await until(
    `${ALERT} firing`,
    async () => {
      const alert = (await prometheus.alerts()).find((candidate) => candidate.labels.alertname === ALERT);
      if (alert?.state === 'pending' && pendingAt === null) {
        pendingAt = Date.now();
        mark(`${ALERT} pending (activeAt ${alert.activeAt})`);
      }
      return alert?.state === 'firing' ? alert : undefined;
    },
    60_000,
    200,
  );
  mark(`${ALERT} firing (value ${Number(firing.value).toFixed(2)} 503/s)`);
  const firstUnavailable = replies.find((reply) => reply.at >= stopAt && reply.status === 503);
  if (firstUnavailable) mark(`first 503 seen by the traffic (${firstUnavailable.path.split('?')[0]})`, firstUnavailable.at);
  t.ok(pendingAt !== null, 'it was pending first (for: 3 s in the test copy)');
  t.same(
    { ...firing.labels },
    { alertname: ALERT, dependency: 'database', job: 'coldtrack', severity: 'critical' },
    'labels: the dependency, the job, critical',
  );
  const during = statusesSince(stopAt);
  t.ok((during[503] ?? 0) > 0, `the traffic got 503s during the outage: ${JSON.stringify(during)}`);

  const startAt = Date.now();
  mark('starting PostgreSQL again');
  await postgres.start();
  mark('PostgreSQL accepts connections');
  await until(`${ALERT} resolved`, async () => !(await prometheus.alerts()).some((alert) => alert.labels.alertname === ALERT), 60_000, 200);
  mark(`${ALERT} resolved (no longer in /api/v1/alerts)`);
  const firstServed = replies.find((reply) => reply.at >= startAt && reply.status === 200);
  if (firstServed) mark(`first 200 after the restart (${firstServed.path.split('?')[0]})`, firstServed.at);
  t.ok(firstServed, 'the service served again by itself, with no restart');

  const origin = timeline[0]!.at;
  const lines = [...timeline]
    .sort((a, b) => a.at - b.at)
    .map(({ at, what }) => `${`+${seconds(at - origin)}`.padStart(9)}  ${new Date(at).toISOString()}  ${what}`);
  t.comment(`timeline (from the private servers' start; the outage lasted ${seconds(startAt - stopAt)}):\n${lines.join('\n')}`);
});

interface Panel {
  type: string;
  id: number;
  title: string;
  datasource?: { uid?: string };
  targets?: { refId: string; expr: string }[];
  panels?: Panel[];
}

t.test("every dashboard panel's every query runs on this Prometheus, on rules and metrics that exist", async (t) => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    uid: string;
    panels: Panel[];
    templating: { list: { name: string }[] };
  };
  t.same(
    dashboard.templating.list.map((variable) => variable.name),
    ['datasource', 'instance'],
    'variables: the data source and the instance',
  );
  const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]).filter((panel) => panel.type !== 'row');
  t.equal(
    new Set(dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]).map((panel) => panel.id)).size,
    dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]).length,
    'panel ids are unique',
  );

  // the rules as this Prometheus loaded them: all of them, each evaluated without an error
  const { groups } = await prometheus.api<{
    groups: { rules: { name: string; query: string; type: string; health: string; lastError?: string }[] }[];
  }>('rules');
  const loaded = groups.flatMap((group) => group.rules);
  t.equal(loaded.filter((rule) => rule.type === 'recording').length, recordingRules().length, 'every recording rule loaded');
  t.same(
    loaded.filter((rule) => rule.health !== 'ok').map((rule) => `${rule.name}: ${rule.health} ${rule.lastError ?? ''}`),
    [],
    'every rule evaluates without an error against the real series',
  );

  const present = new Set(await prometheus.api<string[]>('label/__name__/values'));
  const recorded = recordedNames();
  const exported = exportedNames();
  const withoutData: string[] = [];
  let queries = 0;
  for (const panel of panels) {
    t.equal(panel.datasource?.uid, '${datasource}', `${panel.title}: the dashboard's data source variable`);
    t.ok(panel.targets?.length, `${panel.title}: has queries`);
    for (const target of panel.targets ?? []) {
      queries++;
      // Grafana's variables as "All" would send them
      const expr = target.expr.replaceAll('$instance', '.*');
      const answer = await prometheus.query(expr);
      t.equal(
        answer.status,
        'success',
        `${panel.title} ${target.refId}: ${expr}${answer.error ? ` -> ${answer.errorType}: ${answer.error}` : ''}`,
      );
      if ((answer.data?.result.length ?? 0) === 0) withoutData.push(`${panel.title} ${target.refId}`);
      for (const name of metricNames(expr)) {
        const known = recorded.has(name) || present.has(name) || name === 'ALERTS';
        t.ok(known, `${panel.title} ${target.refId}: ${name} is a recording rule or a metric Prometheus has`);
        if (!recorded.has(name) && name !== 'ALERTS' && name !== 'up') t.ok(exported.has(name), `${name}: exported by the service`);
      }
    }
  }
  // every raw series the recording rules read is in Prometheus, except sensor_policy_last_run_success,
  // which appears once TimescaleDB's scheduler has run a policy (not necessarily in the test's minute)
  const rulesRead = new Set(loaded.filter((rule) => rule.type === 'recording').flatMap((rule) => metricNames(rule.query)));
  const missing = [...rulesRead].filter((name) => !recorded.has(name) && !present.has(name));
  t.same(
    missing.filter((name) => name !== 'sensor_policy_last_run_success'),
    [],
    `every metric the recording rules read is scraped${missing.length ? ` (not yet: ${missing.join(', ')})` : ''}`,
  );
  t.comment(
    `${panels.length} panels, ${queries} queries, ${queries - withoutData.length} with data; ${present.size} metric names in Prometheus`,
  );
  t.ok(withoutData.length <= 4, `nearly every query has data after the outage; none yet: ${withoutData.join('; ') || 'none'}`);
  t.comment(`from the process's start: ${seconds(Date.now() - processStart)} (${seconds(started - processStart)} loading the modules)`);
});
