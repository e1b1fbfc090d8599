// `npm run bench -- --soak [MINUTES]` (default 30): P14, a mode of its own (bench/run.ts starts it;
// what it sends and samples, and why: docs/benchmarks.md). A small data set, a Redis of its own, the
// project's compiled cluster; then MINUTES of the mixed stream in back-to-back 10-second intervals,
// each ended by a sample, with a token life cycle every 5 s and an ingest every minute beside it.
// The verdict, the record and the text: kit/soak-verdict.ts. Every process and the database go on
// every way out, Ctrl-C included.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Redis } from 'ioredis';
import pg from 'pg';
import { commitOfRun, machineOfRun, repoRoot, treeState } from './kit/checkout.js';
import { type Layout, TOKEN_LIMIT_PER_MINUTE, WORKERS } from './kit/config.js';
import type { BenchToken, Employee } from './kit/credentials.js';
import { buildDataset, type Dataset } from './kit/dataset.js';
import { closeLoadGenerators, request, type RequestSpec, runDealtLoad } from './kit/load.js';
import { metric } from './kit/loop-delay.js';
import { startPrivateRedis } from './kit/private-redis.js';
import { onCleanUp, sleep, stopAll, track, wasInterrupted } from './kit/processes.js';
import { recordRun } from './kit/publish.js';
import { mixedPath } from './kit/scenarios.js';
import { profileServer } from './kit/sensor-profiles.js';
import { loadSensorReadings } from './kit/sensor-targets.js';
import { buildServers, startProjectVariant } from './kit/services.js';
import {
  judgeSoak,
  type ResourceSample,
  SAMPLE_SECONDS,
  type SoakInterval,
  type SoakOptions,
  type SoakReport,
  soakRunRecord,
  soakText,
} from './kit/soak-verdict.js';
import { createThrowawayDatabase } from './kit/throwaway-db.js';
import { memoryOf } from './kit/worker-memory.js';

/** A small data set: the soak measures what time does to the service, not the size of its answers. */
const SOAK_DATASET = { heavyUnits: 20, otherUnits: 5, checkInsPerDay: 2, farmersPerCompany: 1000, sensorUnits: 4 };
const CONNECTIONS = 8;
const LIFE_CYCLE_EVERY_MS = 5000;
const INGEST_EVERY_MS = 60_000;

// The dealt stream: nine mixed-scenario requests (kit/scenarios.ts) with API tokens of every
// company, then one employee read with an employee JWT, repeated over 400 entries; entry i's token
// is tokens[i mod T]. Sized so no token or employee comes near its per-minute limit (a token's share
// is half its limit, so a slow interval's catch-up never draws a 429; an employee's 150 of 600):
// the soak measures the service, not the limiter.
const EMPLOYEE_PATHS = ['/api/v1/me', '/api/v1/cooling-units?page_size=50', '/api/v1/api-tokens?page_size=20'];

/** tokens, and employees: readers for the list, plus one manager for the life cycle */
const credentialNeeds = (rate: number) => ({
  tokens: Math.max(8, Math.ceil((rate * 60 * 0.9) / (TOKEN_LIMIT_PER_MINUTE / 2))),
  employees: Math.max(2, Math.ceil((rate * 60 * 0.1) / 150)) + 1,
});

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

// The stateful traffic beside it.

interface TrafficTally {
  status5xx: number;
  failures: string[];
}

const USE_PATH = '/api/v1/analytics/utilization?start_date=2025-06-01&end_date=2025-06-07&page_size=10';

/**
 * One life cycle of `manager`'s token: create, list, retrieve, use, rotate with no grace, the old
 * one refused, the new one used, revoke, the new one refused (the revocation fan-out through Redis
 * on every cycle); every answer checked against what it must be.
 */
async function tokenLifeCycle(serviceUrl: string, manager: Employee, cycle: number, tally: TrafficTally): Promise<void> {
  const call = async (what: string, expected: number, path: string, options: { method?: string; body?: unknown; token?: string } = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${options.token ?? manager.jwt}` };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const answer = await request(serviceUrl + path, {
      method: options.method ?? 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      timeoutMs: 15_000,
    }).catch((error: Error) => ({ status: 0, body: error.message }));
    if (answer.status >= 500) tally.status5xx++;
    if (answer.status !== expected) {
      tally.failures.push(`${what}: ${answer.status} instead of ${expected} (${answer.body.slice(0, 120)})`);
      return null;
    }
    return answer.body === '' ? {} : (JSON.parse(answer.body) as { id?: string; token?: string });
  };
  const created = await call('create', 201, '/api/v1/api-tokens', {
    method: 'POST',
    body: { name: `soak ${cycle}`, scopes: ['utilization'] },
  });
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

/**
 * The minute's readings (one of each kind per sensor unit, stamped now) through the project's CLI,
 * `node dist/src/cli/ingest.js -`: a process that connects, loads and leaves, as a site's uploader.
 */
function ingestMinute(databaseUrl: string, unitIds: number[], tally: TrafficTally): Promise<void> {
  const stamp = new Date(Math.floor(Date.now() / 60_000) * 60_000).toISOString();
  const csv = [
    'cooling_unit_id,specification_type,recorded_at,value',
    ...unitIds.flatMap((unit) => [`${unit},TEMPERATURE,${stamp},${(4 + (unit % 3) / 2).toFixed(1)}`, `${unit},HUMIDITY,${stamp},88.5`]),
  ].join('\n');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['dist/src/cli/ingest.js', '-', '--format', 'csv'], {
      env: { ...process.env, DATABASE_URL: databaseUrl },
      cwd: repoRoot,
      stdio: ['pipe', 'ignore', 'pipe'],
      detached: true,
    });
    track(child);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-1000)));
    child.on('error', (error) => {
      tally.failures.push(`ingest: ${error.message}`);
      resolve();
    });
    child.on('exit', (code, signal) => {
      if (code !== 0) tally.failures.push(`ingest exited ${signal ?? code}: ${stderr.trim().split('\n').at(-1) ?? ''}`);
      resolve();
    });
    child.stdin.end(`${csv}\n`);
  });
}

/** The side traffic until stop(); take() hands over what happened since the last call. */
function startSideTraffic(serviceUrl: string, dataset: Dataset, manager: Employee) {
  let tally: TrafficTally = { status5xx: 0, failures: [] };
  let running = true;
  const every = (ms: number, step: (round: number) => Promise<void>) =>
    (async () => {
      for (let round = 1; running; round++) {
        const started = Date.now();
        await step(round);
        while (running && Date.now() - started < ms) await sleep(Math.min(250, ms - (Date.now() - started)));
      }
    })();
  const loops = [
    every(LIFE_CYCLE_EVERY_MS, (cycle) => tokenLifeCycle(serviceUrl, manager, cycle, tally)),
    every(INGEST_EVERY_MS, () => ingestMinute(dataset.url, dataset.layout.sensorUnitIds, tally)),
  ];
  return {
    take: () => {
      const taken = tally;
      tally = { status5xx: 0, failures: [] };
      return taken;
    },
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

// The sample, from outside the service as an SRE would: each worker's RSS and open file descriptors
// (/proc/<pid>), the cluster's event-loop lag (its /metrics: prom-client resets its lag histogram on
// every scrape, so each sample covers the interval since the last), the service's PostgreSQL
// connections (pg_stat_activity by application name, the bench database only) and its Redis
// connections (CLIENT LIST by connection name, on the soak's own Redis: kit/private-redis.ts).

function fdsOf(pid: number): number | null {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return null; // exited (a respawn is seen as a new pid)
  }
}

async function openProbes(serviceUrl: string, workerPids: () => number[], databaseUrl: string, redisUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'coldtrack-bench-soak' });
  client.on('error', () => {}); // cut by the forced drop at the end
  await client.connect();
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, connectionName: 'bench-soak' });
  await redis.connect();
  const database = new URL(databaseUrl).pathname.slice(1);
  const orNull = <T>(promise: Promise<T>) => promise.catch(() => null);
  return {
    async sample(): Promise<ResourceSample> {
      const [metrics, postgres, clients] = await Promise.all([
        orNull(request(`${serviceUrl}/metrics`, { timeoutMs: 5000 }).then((answer) => (answer.status === 200 ? answer.body : null))),
        orNull(
          client.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'coldtrack-api%'`,
            [database],
          ),
        ),
        orNull(redis.client('LIST')),
      ]);
      const ms = (name: string) => {
        const seconds = metrics === null ? null : metric(metrics, name);
        return seconds === null ? null : seconds * 1000;
      };
      return {
        workers: workerPids().map((pid) => ({ pid, rssMb: memoryOf(pid)?.rssMb ?? null, fds: fdsOf(pid) })),
        lagP99Ms: ms('nodejs_eventloop_lag_p99_seconds'),
        lagMaxMs: ms('nodejs_eventloop_lag_max_seconds'),
        postgresConnections: postgres?.rows[0]!.n ?? null,
        redisConnections:
          clients === null
            ? null
            : String(clients)
                .split('\n')
                .filter((line) => / name=coldtrack-/.test(line)).length,
      };
    },
    async close() {
      await client.end().catch(() => {});
      redis.disconnect();
    },
  };
}

/** The data set with its sensor readings; its pool ends here, so pg_stat_activity counts the service's connections alone. */
async function prepare(options: SoakOptions, log: (line: string) => void): Promise<Dataset> {
  const server = await profileServer(options.profile);
  if (server.adminUrl === null) throw new Error(`the ${options.profile} profile has no server: ${server.reason}`);
  const needs = credentialNeeds(options.rate);
  const database = await createThrowawayDatabase({ label: 'soak', dropOnSignals: false, adminUrl: server.adminUrl });
  onCleanUp(() => database.drop());
  const dataset = await buildDataset(database, SOAK_DATASET, { alpha: 0, mixed: needs.tokens, managers: needs.employees }, log, {
    sensorStorage: options.profile,
    sensorRetentionDays: null,
  });
  try {
    const readings = await loadSensorReadings(dataset.pool, dataset.layout.sensorUnitIds);
    log(`${readings.rows} sensor readings for ${dataset.layout.sensorUnitIds.length} units in ${readings.seconds.toFixed(1)} s`);
  } finally {
    await dataset.pool.end();
  }
  return dataset;
}

/** The soak itself, its report in memory (the tests call it); the run's clean-up stops what it started. */
export async function measureSoak(options: SoakOptions, log: (line: string) => void): Promise<SoakReport> {
  onCleanUp(() => stopAll());
  onCleanUp(async () => closeLoadGenerators());
  const startedAt = new Date();
  const loadAtStart = loadavg()[0]!;
  const dataset = await prepare(options, log);
  const redis = await startPrivateRedis();
  onCleanUp(() => redis.stop());
  const entries = await buildServers(log, { reference: false });
  const service = await startProjectVariant({ name: 'project', databaseUrl: dataset.url, redisUrl: redis.url, env: {} }, log);
  onCleanUp(() => service.stop());
  log(`cluster up at ${service.url}: workers ${service.workerPids().join(', ')}; Redis ${redis.version} at ${redis.url}`);

  const needs = credentialNeeds(options.rate);
  const [manager, ...readers] = dataset.credentials.managers.take(needs.employees);
  const requests = soakRequests(dataset.credentials.mixed.take(needs.tokens), readers, dataset.layout);
  const probes = await openProbes(service.url, () => service.workerPids(), dataset.url, redis.url);
  onCleanUp(() => probes.close());

  const load = { url: service.url, connections: CONNECTIONS, overallRate: options.rate, requests };
  let entry = (await runDealtLoad({ ...load, duration: SAMPLE_SECONDS, firstEntry: 0 })).dealt;
  log(`warm-up: ${SAMPLE_SECONDS} s at ${options.rate}/s; then ${options.minutes} min of load, a sample every ${SAMPLE_SECONDS} s`);
  const side = startSideTraffic(service.url, dataset, manager!);
  await probes.sample(); // the lag histogram restarts here
  const intervals: SoakInterval[] = [];
  const failures: string[] = [];
  const loadStarted = performance.now();
  const secondsOfLoad = () => Math.round((performance.now() - loadStarted) / 100) / 10;
  const totalS = options.minutes * 60;
  try {
    while (!wasInterrupted() && secondsOfLoad() < totalS - 0.5) {
      const startS = secondsOfLoad();
      const duration = Math.max(1, Math.min(SAMPLE_SECONDS, Math.round(totalS - (performance.now() - loadStarted) / 1000)));
      const { figures, dealt } = await runDealtLoad({ ...load, duration, firstEntry: entry });
      entry += dealt;
      const sample = await probes.sample();
      const beside = side.take();
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
        sample,
      };
      intervals.push(interval);
      const perWorker = (value: (worker: ResourceSample['workers'][number]) => string) => sample.workers.map(value).join('/');
      log(
        `${(interval.atS / 60).toFixed(1)} min: ${(figures.responses / figures.durationS).toFixed(1)}/s p50 ${interval.p50Ms} p99 ${interval.p99Ms} ms; ` +
          `RSS ${perWorker((w) => w.rssMb?.toFixed(0) ?? '-')} MB; fds ${perWorker((w) => String(w.fds ?? '-'))}; ` +
          `lag p99 ${sample.lagP99Ms?.toFixed(1) ?? '-'} ms; pg ${sample.postgresConnections ?? '-'} redis ${sample.redisConnections ?? '-'}; ` +
          `5xx ${interval.status5xx}${interval.failures > 0 ? `; ${interval.failures} failed` : ''}`,
      );
    }
  } finally {
    await side.stop();
  }
  if (wasInterrupted()) throw new Error('interrupted');
  failures.push(...side.take().failures);
  return {
    kind: 'soak',
    startedAt: startedAt.toISOString(),
    durationS: (Date.now() - startedAt.getTime()) / 1000,
    options,
    machine: { ...machineOfRun(loadAtStart), redis: redis.version },
    service: { command: `node ${entries.project} (WORKERS=${WORKERS})`, workers: WORKERS, connections: CONNECTIONS },
    dataset: { counts: dataset.counts, sensorUnits: dataset.layout.sensorUnitIds.length },
    intervals,
    failures: failures.slice(0, 50),
    verdict: judgeSoak(intervals, options.minutes),
  };
}

/** The soak, its report and its line; the caller's clean-up stops everything it started. */
export async function runSoak(
  options: SoakOptions,
  run: { publish: boolean; partial: string[] },
  log: (line: string) => void,
): Promise<void> {
  const record = soakRunRecord(await measureSoak(options, log), run.partial, commitOfRun());
  console.log(soakText(record));
  recordRun(record, { publish: run.publish, now: () => treeState() });
}
