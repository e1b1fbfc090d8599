// `npm run bench -- --soak [MINUTES]` (default 30): P14 (docs/benchmarks.md). The project's cluster
// on a small data set with a Redis of its own; the mixed stream in back-to-back 10-second intervals,
// each ended by a sample, with a token life cycle every 5 s and an ingest every minute beside it.
import { readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Redis } from 'ioredis';
import pg from 'pg';
import { type Layout, TOKEN_LIMIT_PER_MINUTE } from './kit/config.js';
import type { BenchToken, Employee } from './kit/credentials.js';
import { buildDataset, type Dataset } from './kit/dataset.js';
import { closeLoadGenerators, request, type RequestSpec, runDealtLoad } from './kit/load.js';
import { metric } from './kit/loop-delay.js';
import { startPrivateRedis } from './kit/private-redis.js';
import { onCleanUp, runChild, sleep, stopAll, wasInterrupted } from './kit/processes.js';
import { recordRun } from './kit/publish.js';
import { soakText } from './kit/report.js';
import { machineOfRun } from './kit/run-record.js';
import { mixedPath } from './kit/scenarios.js';
import { profileServer } from './kit/sensor-profiles.js';
import { loadSensorReadings } from './kit/sensor-targets.js';
import { buildServers, startProjectCluster } from './kit/services.js';
import {
  type ResourceSample,
  SAMPLE_SECONDS,
  type SoakInterval,
  type SoakOptions,
  type SoakRun,
  soakRecordOf,
} from './kit/soak-verdict.js';
import { createThrowawayDatabase } from './kit/throwaway-db.js';
import { memoryOf } from './kit/worker-memory.js';

/** A small data set: the soak measures what time does to the service, not the size of its answers. */
const SOAK_DATASET = { heavyUnits: 20, otherUnits: 5, checkInsPerDay: 2, farmersPerCompany: 1000, sensorUnits: 4 };
const CONNECTIONS = 8;
const EMPLOYEE_PATHS = ['/api/v1/me', '/api/v1/cooling-units?page_size=50', '/api/v1/api-tokens?page_size=20'];

/** Tokens and employees (readers, and a manager for the life cycle): a token draws half its limit, an employee 150 of 600. */
const credentialNeeds = (rate: number) => ({
  tokens: Math.max(8, Math.ceil((rate * 60 * 0.9) / (TOKEN_LIMIT_PER_MINUTE / 2))),
  employees: Math.max(2, Math.ceil((rate * 60 * 0.1) / 150)) + 1,
});

/** The dealt stream: nine mixed-scenario requests with the tokens in turn, then one employee read. */
function soakRequests(tokens: BenchToken[], readers: Employee[], layout: Layout): RequestSpec[] {
  let dataEntry = 0;
  let employeeEntry = 0;
  return Array.from({ length: 400 }, (_, i): RequestSpec => {
    if (i % 10 === 9) {
      const reader = readers[employeeEntry % readers.length]!;
      const path = EMPLOYEE_PATHS[employeeEntry++ % EMPLOYEE_PATHS.length]!;
      return { method: 'GET', path, headers: { authorization: `Bearer ${reader.jwt}` } };
    }
    const token = tokens[dataEntry % tokens.length]!;
    return { method: 'GET', path: mixedPath(token, dataEntry++, layout, true), headers: { authorization: `Bearer ${token.raw}` } };
  });
}

interface TrafficTally {
  status5xx: number;
  failures: string[];
}

const USE_PATH = '/api/v1/analytics/utilization?start_date=2025-06-01&end_date=2025-06-07&page_size=10';

/** A token's life cycle, every answer checked: the revocation fan-out through Redis on every cycle. */
async function tokenLifeCycle(serviceUrl: string, manager: Employee, cycle: string, tally: TrafficTally): Promise<void> {
  const call = async (what: string, expected: number, path: string, options: { method?: string; body?: unknown; token?: string } = {}) => {
    const { method = 'GET', body, token = manager.jwt } = options;
    const answer = await request(serviceUrl + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      timeoutMs: 15_000,
    }).catch((error: Error) => ({ status: 0, body: error.message }));
    if (answer.status >= 500) tally.status5xx++;
    if (answer.status === expected) return answer.body === '' ? {} : (JSON.parse(answer.body) as { id?: string; token?: string });
    tally.failures.push(`${what}: ${answer.status} instead of ${expected} (${answer.body.slice(0, 120)})`);
    return null;
  };
  const body = { name: `soak ${cycle}`, scopes: ['utilization'] };
  const created = await call('create', 201, '/api/v1/api-tokens', { method: 'POST', body });
  if (!created?.id || !created.token) return;
  await call('list', 200, '/api/v1/api-tokens?page_size=5');
  await call('retrieve', 200, `/api/v1/api-tokens/${created.id}`);
  await call('use', 200, USE_PATH, { token: created.token });
  const rotated = await call('rotate', 201, `/api/v1/api-tokens/${created.id}/rotate`, {
    method: 'POST',
    body: { grace_period_seconds: 0 },
  });
  if (!rotated?.id || !rotated.token) return;
  await call('old token after rotation', 401, USE_PATH, { token: created.token });
  await call('use rotated', 200, USE_PATH, { token: rotated.token });
  await call('revoke', 200, `/api/v1/api-tokens/${rotated.id}/revoke`, { method: 'POST' });
  await call('revoked token', 401, USE_PATH, { token: rotated.token });
}

/** The minute's readings through the project's CLI: a process that connects, loads and leaves, as a site's uploader. */
async function ingestMinute(databaseUrl: string, unitIds: number[], tally: TrafficTally): Promise<void> {
  const stamp = new Date(Math.floor(Date.now() / 60_000) * 60_000).toISOString();
  const rows = unitIds.flatMap((unit) => [
    `${unit},TEMPERATURE,${stamp},${(4 + (unit % 3) / 2).toFixed(1)}`,
    `${unit},HUMIDITY,${stamp},88.5`,
  ]);
  const input = ['cooling_unit_id,specification_type,recorded_at,value', ...rows, ''].join('\n');
  const env = { ...process.env, DATABASE_URL: databaseUrl };
  const child = await runChild(process.execPath, ['dist/src/cli/ingest.js', '-', '--format', 'csv'], { env, input });
  if (child.failure !== null) tally.failures.push(`ingest exited ${child.failure}: ${child.stderr.trim().split('\n').at(-1) ?? ''}`);
}

/** Beside one interval's load: a token life cycle every 5 s of it, and at each minute's start an ingest. */
async function sideTraffic(url: string, dataset: Dataset, manager: Employee, index: number, durationS: number): Promise<TrafficTally> {
  const tally: TrafficTally = { status5xx: 0, failures: [] };
  const started = Date.now();
  const cycles = async () => {
    for (let atMs = 0; atMs < durationS * 1000; atMs += 5_000) {
      await sleep(atMs - (Date.now() - started));
      await tokenLifeCycle(url, manager, `${index}.${atMs / 5_000}`, tally);
    }
  };
  const minute = (index * SAMPLE_SECONDS) % 60 === 0;
  await Promise.all([cycles(), minute && ingestMinute(dataset.url, dataset.layout.sensorUnitIds, tally)]);
  return tally;
}

const fdsOf = (pid: number) => {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return null; // exited (a respawn is seen as a new pid)
  }
};

/**
 * The sample, from outside as an SRE would take it: the lag (prom-client resets it on every scrape)
 * and the service's connections, by name, on the bench database and the soak's Redis.
 */
async function openProbes(serviceUrl: string, workerPids: () => number[], databaseUrl: string, redisUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'coldtrack-bench-soak' });
  client.on('error', () => {}); // cut by the forced drop at the end
  await client.connect();
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, connectionName: 'bench-soak' });
  await redis.connect();
  onCleanUp(async () => {
    await client.end().catch(() => {});
    redis.disconnect();
  });
  const database = new URL(databaseUrl).pathname.slice(1);
  const orNull = <T>(promise: Promise<T>) => promise.catch(() => null);
  return async (): Promise<ResourceSample> => {
    const [metrics, postgres, clients] = await Promise.all([
      orNull(request(`${serviceUrl}/metrics`, { timeoutMs: 5000 })),
      orNull(
        client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'coldtrack-api%'`,
          [database],
        ),
      ),
      orNull(redis.client('LIST')),
    ]);
    const lag = metrics?.status === 200 ? metric(metrics.body, 'nodejs_eventloop_lag_p99_seconds') : null;
    return {
      workers: workerPids().map((pid) => ({ pid, rssMb: memoryOf(pid)?.rssMb ?? null, fds: fdsOf(pid) })),
      lagP99Ms: lag === null ? null : lag * 1000,
      postgresConnections: postgres?.rows[0]!.n ?? null,
      redisConnections: clients === null ? null : (String(clients).match(/ name=coldtrack-/g)?.length ?? 0),
    };
  };
}

/** The soak itself (the tests call it); the run's clean-up stops what it started. */
export async function measureSoak(options: SoakOptions, log: (line: string) => void): Promise<SoakRun> {
  onCleanUp(() => stopAll());
  onCleanUp(async () => closeLoadGenerators());
  const startedAt = new Date();
  const loadAtStart = loadavg()[0]!;
  const server = await profileServer(options.profile);
  if (server.adminUrl === null) throw new Error(`the ${options.profile} profile has no server: ${server.reason}`);
  const needs = credentialNeeds(options.rate);
  const database = await createThrowawayDatabase({ label: 'soak', dropOnSignals: false, adminUrl: server.adminUrl });
  onCleanUp(() => database.drop());
  const dataset = await buildDataset(database, SOAK_DATASET, { alpha: 0, mixed: needs.tokens, managers: needs.employees }, log, {
    sensorStorage: options.profile,
    sensorRetentionDays: null,
  });
  const readings = await loadSensorReadings(dataset.pool, dataset.layout.sensorUnitIds).finally(() => dataset.pool.end());
  log(`${readings.rows} sensor readings for ${dataset.layout.sensorUnitIds.length} units in ${readings.seconds.toFixed(1)} s`);
  // the data set's pool has ended: pg_stat_activity counts the service's connections alone
  const redis = await startPrivateRedis();
  onCleanUp(() => redis.stop());
  await buildServers(log, { reference: false });
  const service = await startProjectCluster({ name: 'project', databaseUrl: dataset.url, redisUrl: redis.url, env: {} }, log);
  onCleanUp(() => service.stop());
  log(`cluster up at ${service.url}: workers ${service.workerPids().join(', ')}; Redis ${redis.version} at ${redis.url}`);

  const [manager, ...readers] = dataset.credentials.managers.take(needs.employees);
  const requests = soakRequests(dataset.credentials.mixed.take(needs.tokens), readers, dataset.layout);
  const sample = await openProbes(service.url, () => service.workerPids(), dataset.url, redis.url);
  const load = { url: service.url, connections: CONNECTIONS, overallRate: options.rate, requests };
  let entry = (await runDealtLoad({ ...load, duration: SAMPLE_SECONDS, firstEntry: 0 })).dealt;
  log(`warm-up: ${SAMPLE_SECONDS} s at ${options.rate}/s; then ${options.minutes} min of load, a sample every ${SAMPLE_SECONDS} s`);
  await sample(); // the lag histogram restarts here
  const intervals: SoakInterval[] = [];
  const failures: string[] = [];
  const loadStarted = performance.now();
  const secondsOfLoad = () => Math.round((performance.now() - loadStarted) / 100) / 10;
  const totalS = options.minutes * 60;
  while (!wasInterrupted() && secondsOfLoad() < totalS - 0.5) {
    const startS = secondsOfLoad();
    const duration = Math.max(1, Math.min(SAMPLE_SECONDS, Math.round(totalS - startS)));
    const [{ figures, dealt }, beside] = await Promise.all([
      runDealtLoad({ ...load, duration, firstEntry: entry }),
      sideTraffic(service.url, dataset, manager!, intervals.length, duration),
    ]);
    entry += dealt;
    failures.push(...beside.failures);
    const count5xx = Object.entries(figures.statusCodes).reduce((sum, [code, n]) => sum + (Number(code) >= 500 ? n : 0), 0);
    const answered = figures.responses > 0;
    const interval: SoakInterval = {
      startS,
      atS: secondsOfLoad(),
      requests: figures.responses,
      p50Ms: answered ? figures.latencyMs.p50 : null,
      p99Ms: answered ? figures.latencyMs.p99 : null,
      status5xx: count5xx + beside.status5xx,
      failures: beside.failures.length + figures.errors + figures.timeouts,
      otherNon2xx: figures.non2xx - count5xx,
      sample: await sample(),
    };
    intervals.push(interval);
    const { workers, lagP99Ms, postgresConnections, redisConnections } = interval.sample;
    log(
      `${(interval.atS / 60).toFixed(1)} min: ${(figures.responses / figures.durationS).toFixed(1)}/s p50 ${interval.p50Ms} p99 ${interval.p99Ms} ms; ` +
        `RSS ${workers.map((w) => w.rssMb?.toFixed(0) ?? '-').join('/')} MB; fds ${workers.map((w) => w.fds ?? '-').join('/')}; ` +
        `lag p99 ${lagP99Ms?.toFixed(1) ?? '-'} ms; pg ${postgresConnections ?? '-'} redis ${redisConnections ?? '-'}; ` +
        `5xx ${interval.status5xx}; ${interval.failures} failed`,
    );
  }
  if (wasInterrupted()) throw new Error('interrupted');
  return {
    options,
    startedAt,
    finishedAt: new Date(),
    machine: machineOfRun(loadAtStart, null, redis.version),
    intervals,
    failures,
  };
}

export async function runSoak(
  options: SoakOptions,
  run: { publish: boolean; partial: string[] },
  log: (line: string) => void,
): Promise<void> {
  const record = soakRecordOf(await measureSoak(options, log), run.partial);
  console.log(soakText(record));
  recordRun(record, run.publish);
}
