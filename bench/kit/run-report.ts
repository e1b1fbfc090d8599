// The end of a run: the machine it ran on (versions, commit, load) and the Report its table and
// its record read.
import { cpus } from 'node:os';
import { Redis } from 'ioredis';
import { type KitConfig, WINDOW, WORKERS } from './config.js';
import type { Dataset } from './dataset.js';
import { commitMeasured, machineOfRun } from './checkout.js';
import type { Report } from './report.js';
import type { ScenarioResult } from './results.js';
import type { RevocationFigures } from './revocation.js';
import type { SensorData, SensorScriptResults } from './sensor-targets.js';
import { evaluateTargets } from './targets.js';
import type { VariantResult } from './variants.js';

async function redisVersionAt(redisUrl: string): Promise<string> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  return redis
    .connect()
    .then(() => redis.info('server'))
    .then(
      (info) => /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown',
      () => 'unknown',
    )
    .finally(() => redis.disconnect());
}

export interface RunOutcome {
  config: KitConfig;
  redisUrl: string;
  startedAt: Date;
  loadAtStart: number;
  dataset: Dataset;
  sensorData: SensorData;
  scenarios: ScenarioResult[];
  revocation: RevocationFigures | { error: string } | null;
  /** the cluster variants against the cluster as shipped (null: none run) */
  variants: VariantResult[] | null;
  /** bench/sensor-*.ts on each storage profile (null: not run, --only) */
  sensorScripts: SensorScriptResults | null;
}

export async function assembleReport(outcome: RunOutcome): Promise<Report> {
  const { config, dataset, startedAt } = outcome;
  const versions = await dataset.pool.query<{ version: string }>('SELECT version()');
  const redisVersion = await redisVersionAt(outcome.redisUrl);
  const targets = evaluateTargets({
    scenarios: outcome.scenarios,
    revocation: outcome.revocation,
    sensorScripts: outcome.sensorScripts,
    variants: outcome.variants,
  });
  const finishedAt = new Date();
  return {
    kit: 'coldtrack-api bench',
    version: 1,
    mode: config.mode,
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationS: (finishedAt.getTime() - startedAt.getTime()) / 1000,
    seconds: config.seconds,
    runsPerServer: config.order.length / 2,
    machine: {
      ...machineOfRun(outcome.loadAtStart),
      postgres: versions.rows[0]?.version.split(' on ')[0] ?? 'unknown',
      redis: redisVersion,
      commit: commitMeasured(),
      note:
        `The load generator (autocannon, one process per load) runs on the same ${cpus().length} cores as both clusters, PostgreSQL and Redis: ` +
        "absolute figures are this machine's; the project/reference ratios are what carries over.",
    },
    services: {
      project: { command: 'node --import tsx src/main.ts (WORKERS=2, REDIS_URL, LOG_LEVEL=warn)', workers: WORKERS },
      reference: { command: 'node --import tsx bench/reference/server.ts (WORKERS=2)', workers: WORKERS },
    },
    dataset: {
      database: dataset.name,
      window: `${WINDOW.first} .. ${WINDOW.last} (${WINDOW.days} days)`,
      size: config.dataset,
      counts: dataset.counts,
      buildSeconds: dataset.buildSeconds,
      sensorReadings: outcome.sensorData.sensorReadings,
    },
    sensor: outcome.sensorData.sensor,
    scenarios: outcome.scenarios,
    revocation: outcome.revocation,
    variants: outcome.variants,
    sensorScripts: outcome.sensorScripts,
    targets,
    notes: [
      "req/s is 2xx responses per second over the run; latency percentiles are read from the runs' latency histograms (2xx answers, microseconds) merged per server.",
      'Each run uses tokens (and employees) that no other run used, spread so no token exceeds the 100/min limit: a non-2xx count above 0 is a finding, not the limit.',
      "P5 reads the project's event-loop delay from GET /metrics (cluster aggregate: the mean of the workers' p99, the max of their max), the worst project run; the reference reports per worker.",
      "P8 is each worker's peak RSS while serving the largest pages: VmHWM from /proc/<worker>/status, reset at the start of each run (clear_refs 5); VmRSS sampled every 100 ms is shown beside it.",
    ],
  };
}
