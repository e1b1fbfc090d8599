// `npm run bench -- --soak [MINUTES]` (default 30): P14, a mode of its own (bench/run.ts starts
// it). A fresh data set in a throwaway database of one storage profile (--profile, default
// postgres), a Redis of its own, the project's compiled cluster (dist/src/main.js: src/cluster.ts
// with 2 workers), then MINUTES of the mixed scenario at a steady --soak-rate (default 20/s; every
// endpoint) through the kit's load generator in back-to-back 10-second intervals, an employee's
// token life cycle every 5 s and an ingest every minute (all of it kit/soak-traffic.ts). Each
// interval ends with a sample (kit/soak-probes.ts); the verdict is kit/soak-verdict.ts's. Writes
// a 'soak' line of runs.jsonl (every sample) (--publish: the history and docs/benchmarks.md, kit/publish.ts).
// Every process and the database go on every way out (the run's clean-up, Ctrl-C included).
import { loadavg } from 'node:os';
import { buildDataset, type Dataset } from './kit/dataset.js';
import { onCleanUp, sleep, stopAll, wasInterrupted } from './kit/processes.js';
import { BENCH_JWT_SECRET, WORKERS } from './kit/config.js';
import { closeLoadGenerators, runDealtLoad } from './kit/load.js';
import { recordRun } from './kit/publish.js';
import { loadSensorReadings } from './kit/sensor-targets.js';
import { profileServer } from './kit/sensor-profiles.js';
import { buildServers, type Service, startService } from './kit/services.js';
import {
  ingestMinute,
  newTally,
  SAMPLE_SECONDS,
  SOAK_CONNECTIONS,
  soakCredentialNeeds,
  type SoakOptions,
  soakRequests,
  tokenLifeCycle,
  type TrafficTally,
} from './kit/soak-traffic.js';
import { startPrivateRedis } from './kit/private-redis.js';
import { ResourceProbes } from './kit/soak-probes.js';
import { judgeSoak, type SoakInterval, type SoakReport, soakRunRecord, soakText } from './kit/soak-verdict.js';
import { createThrowawayDatabase } from './kit/throwaway-db.js';
import { commitOfRun, machineOfRun, treeState } from './kit/checkout.js';
import { freePort } from '../src/free-port.js';

/** A small data set: the soak measures what time does to the service, not the size of its answers. */
const SOAK_DATASET = { heavyUnits: 20, otherUnits: 5, checkInsPerDay: 2, farmersPerCompany: 1000, sensorUnits: 4 };
const LIFE_CYCLE_EVERY_MS = 5000;
const INGEST_EVERY_MS = 60_000;
const WARMUP_SECONDS = SAMPLE_SECONDS;
let endDatasetPool = async () => {};

async function prepare(options: SoakOptions, log: (line: string) => void): Promise<Dataset> {
  const server = await profileServer(options.profile);
  if (server.adminUrl === null) throw new Error(`the ${options.profile} profile has no server: ${server.reason}`);
  const needs = soakCredentialNeeds(options.rate);
  const database = await createThrowawayDatabase({ label: 'soak', dropOnSignals: false, adminUrl: server.adminUrl });
  onCleanUp(() => database.drop());
  const dataset = await buildDataset(database, SOAK_DATASET, { alpha: 0, mixed: needs.tokens, managers: needs.employees }, log, {
    sensorStorage: options.profile,
    sensorRetentionDays: null,
  });
  let poolOpen = true;
  onCleanUp(async () => {
    if (poolOpen) await dataset.pool.end();
  });
  // closed before the load: the PostgreSQL count is then the service's connections alone
  endDatasetPool = async () => {
    poolOpen = false;
    await dataset.pool.end();
  };
  const readings = await loadSensorReadings(dataset.pool, dataset.layout.sensorUnitIds);
  log(`${readings.rows} sensor readings for ${dataset.layout.sensorUnitIds.length} units in ${readings.seconds.toFixed(1)} s`);
  return dataset;
}

/** The traffic beside the dealt stream, until stop(): a life cycle every 5 s, an ingest every minute. */
function startSideTraffic(serviceUrl: string, dataset: Dataset, manager: Dataset['credentials']['revoker']) {
  let tally = newTally();
  let running = true;
  let cycle = 0;
  const loops = [
    (async () => {
      while (running) {
        const started = Date.now();
        await tokenLifeCycle(serviceUrl, manager, ++cycle, tally);
        await sleep(Math.max(0, LIFE_CYCLE_EVERY_MS - (Date.now() - started)));
      }
    })(),
    (async () => {
      while (running) {
        const started = Date.now();
        await ingestMinute(dataset.url, dataset.layout.sensorUnitIds, new Date(), tally);
        while (running && Date.now() - started < INGEST_EVERY_MS) await sleep(250);
      }
    })(),
  ];
  return {
    /** what happened since the last call */
    take(): TrafficTally {
      const taken = tally;
      tally = newTally();
      return taken;
    },
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
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
  let service: Service | null = null;
  onCleanUp(async () => service?.stop());
  service = await startService({
    name: 'project',
    entry: entries.project,
    port: await freePort(),
    workers: WORKERS,
    env: { DATABASE_URL: dataset.url, REDIS_URL: redis.url, JWT_SECRET: BENCH_JWT_SECRET, LOG_LEVEL: 'warn' },
    readyPath: '/readyz',
  });
  log(`cluster up at ${service.url}: workers ${service.workerPids().join(', ')}; Redis ${redis.version} at ${redis.url}`);
  await endDatasetPool();

  const [manager, ...readers] = dataset.credentials.managers.take(soakCredentialNeeds(options.rate).employees);
  const tokens = dataset.credentials.mixed.take(soakCredentialNeeds(options.rate).tokens);
  const requests = soakRequests(tokens, readers, dataset.layout);
  const probes = await ResourceProbes.open({
    serviceUrl: service.url,
    workerPids: () => service!.workerPids(),
    databaseUrl: dataset.url,
    redisUrl: redis.url,
  });
  onCleanUp(() => probes.close());

  const load = { url: service.url, connections: SOAK_CONNECTIONS, overallRate: options.rate, requests };
  let entry = (await runDealtLoad({ ...load, duration: WARMUP_SECONDS, firstEntry: 0 })).dealt;
  log(`warm-up: ${WARMUP_SECONDS} s at ${options.rate}/s; then ${options.minutes} min of load, a sample every ${SAMPLE_SECONDS} s`);
  const side = startSideTraffic(service.url, dataset, manager!);
  await probes.sample(); // the lag histogram restarts here
  const intervals: SoakInterval[] = [];
  const loadStarted = performance.now();
  const failures: string[] = [];
  const totalS = options.minutes * 60;
  const secondsOfLoad = () => Math.round((performance.now() - loadStarted) / 100) / 10;
  try {
    while (!wasInterrupted() && secondsOfLoad() < totalS - 0.5) {
      const startS = secondsOfLoad();
      const remaining = totalS - (performance.now() - loadStarted) / 1000;
      const { figures, dealt } = await runDealtLoad({
        ...load,
        duration: Math.max(1, Math.min(SAMPLE_SECONDS, Math.round(remaining))),
        firstEntry: entry,
      });
      entry += dealt;
      const sample = await probes.sample();
      const side5xx = side.take();
      failures.push(...side5xx.failures);
      const count5xx = Object.entries(figures.statusCodes).reduce((sum, [code, n]) => sum + (Number(code) >= 500 ? n : 0), 0);
      const interval: SoakInterval = {
        startS,
        atS: secondsOfLoad(),
        requests: figures.responses,
        p50Ms: figures.responses > 0 ? figures.latencyMs.p50 : null,
        p99Ms: figures.responses > 0 ? figures.latencyMs.p99 : null,
        status5xx: count5xx + side5xx.status5xx,
        failures: side5xx.failures.length + figures.errors + figures.timeouts,
        otherNon2xx: figures.non2xx - count5xx,
        sample,
      };
      intervals.push(interval);
      const rss = sample.workers.map((worker) => worker.rssMb?.toFixed(0) ?? '-').join('/');
      log(
        `${(interval.atS / 60).toFixed(1)} min: ${(figures.responses / figures.durationS).toFixed(1)}/s p50 ${interval.p50Ms} p99 ${interval.p99Ms} ms; ` +
          `RSS ${rss} MB; fds ${sample.workers.map((worker) => worker.fds ?? '-').join('/')}; lag p99 ${sample.lagP99Ms?.toFixed(1) ?? '-'} ms; ` +
          `pg ${sample.postgresConnections ?? '-'} redis ${sample.redisConnections ?? '-'}; 5xx ${interval.status5xx}` +
          (interval.failures > 0 ? `; ${interval.failures} failed` : ''),
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
    service: { command: `node ${entries.project} (WORKERS=${WORKERS})`, workers: WORKERS, connections: SOAK_CONNECTIONS },
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
  const report = await measureSoak(options, log);
  const record = soakRunRecord(report, run.partial, commitOfRun());
  console.log(soakText(record));
  recordRun(record, { publish: run.publish, now: () => treeState() });
}
