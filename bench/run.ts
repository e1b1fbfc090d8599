// `npm run bench`: the data set, both clusters, every scenario alternating between them, P7, the
// variants (P19) and the sensor scripts; the table on stdout, the record in bench/results/runs.jsonl
// (docs/benchmarks.md). --scale and --soak are runs of their own (scale.ts, soak.ts); the command
// line: kit/run-options.ts. Env: BENCH_ADMIN_URL, BENCH_REDIS_URL. Exit 0 when the run completed
// (missed targets included), 1 when the kit failed, 2 for a bad command line or a refused --publish.
import { loadavg } from 'node:os';
import { loadSensorStorageConfig } from '../src/config.js';
import { cleanUp, handleInterrupts, onCleanUp, stopAll, wasInterrupted } from './kit/processes.js';
import type { Server } from './kit/config.js';
import { buildDataset, type Dataset } from './kit/dataset.js';
import { closeLoadGenerators } from './kit/load.js';
import { measureRevocation, type RevocationFigures } from './kit/revocation.js';
import { STATE_AT_START } from './kit/checkout.js';
import { recordRun, treeRefusal } from './kit/publish.js';
import { readRunOptions, type RunOptions } from './kit/run-options.js';
import { formatTable } from './kit/report.js';
import { assembleRecord } from './kit/run-report.js';
import { atCeiling, planCredentials, runScenarios } from './kit/scenario-runs.js';
import { probeSensorData, sensorScriptTargets } from './kit/sensor-targets.js';
import { type Service, startClusters, stopClusters } from './kit/services.js';
import { createThrowawayDatabase } from './kit/throwaway-db.js';
import { runScaleCurve } from './scale.js';
import { runSoak } from './soak.js';
import { runVariants, variantScenarios, variantWarmups } from './kit/variants.js';

const options = ((): RunOptions => {
  try {
    return readRunOptions();
  } catch (error) {
    // a bad command line: one line saying what is wrong, exit 2
    console.error(`npm run bench: ${(error as Error).message}`);
    process.exit(2);
  }
})();
// refused before a quarter of an hour is spent on a run that could not be published
const publishBlocked = options.publish ? treeRefusal(STATE_AT_START) : null;
if (publishBlocked) {
  console.error(`npm run bench: --publish refused: ${publishBlocked}`);
  process.exit(2);
}
const { config } = options;
const startedAt = new Date();
const loadAtStart = loadavg()[0]!;
const log = (line: string) => console.error(`[bench ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0).padStart(4)} s] ${line}`);

handleInterrupts(log);

/** The data set in a database of its own, dropped by the clean-up (and, as a last resort, at exit). */
async function prepareDataset(run: RunOptions): Promise<Dataset> {
  // each variant runs its scenario once more, against the shipped cluster and the variant
  const needs = planCredentials(run.config, [...run.scenarios, ...variantScenarios(run.variants)], variantWarmups(run.variants));
  log(
    `${run.config.mode} run: ${run.scenarios.length} scenarios, ${run.config.seconds} s runs, order ${run.config.order.join('/')}; ` +
      `${needs.alpha + needs.mixed} tokens and ${needs.managers} employees planned`,
  );
  // the clean-up, not the helper, drops it on Ctrl-C: the clusters using it are stopped first
  const database = await createThrowawayDatabase({ dropOnSignals: false });
  onCleanUp(() => database.drop());
  const dataset = await buildDataset(database, run.config.dataset, needs, log, loadSensorStorageConfig());
  onCleanUp(() => dataset.pool.end());
  return dataset;
}

async function revocationOf(projectUrl: string, dataset: Dataset): Promise<RevocationFigures | { error: string } | null> {
  if (!options.revocation) return null;
  log(`revocation: ${config.revocationRounds} rounds of revoke-while-hammering, then the variants (two instances, Redis restarted empty)`);
  return measureRevocation(
    projectUrl,
    dataset.credentials.alpha.take(config.revocationRounds),
    dataset.layout.heavy.unitIds[0]!,
    dataset.credentials.revoker,
    { databaseUrl: dataset.url, log },
  ).catch((error: Error) => ({ error: `revocation failed: ${error.message}` }));
}

async function main() {
  onCleanUp(() => stopAll());
  onCleanUp(async () => closeLoadGenerators());
  const dataset = await prepareDataset(options);

  const running: Partial<Record<Server, Service>> = {};
  onCleanUp(() => stopClusters(running));
  const clusters = await startClusters({ databaseUrl: dataset.url, redisUrl: options.redisUrl, running }, log);

  // sensor-data: measured when the endpoint answers; its readings are loaded only then
  const sensor = await probeSensorData(clusters.project.url, dataset, log);
  const context = {
    layout: dataset.layout,
    credentials: dataset.credentials,
    seconds: config.seconds,
    sensorAvailable: sensor.available,
    rate: atCeiling,
  };
  const scenarios = await runScenarios(options.scenarios, {
    config,
    context,
    clusters,
    sensor,
    interrupted: wasInterrupted,
    log,
  });
  const revocation = await revocationOf(clusters.project.url, dataset);
  // the variants start fresh clusters of their own, and the sensor scripts build their own data:
  // the run's clusters are stopped first so they do not compete
  await stopClusters(running);
  const variants =
    options.variants.length > 0
      ? await runVariants(options.variants, {
          databaseUrl: dataset.url,
          redisUrl: options.redisUrl,
          setting: { config, context, sensor, interrupted: wasInterrupted, log },
        })
      : null;

  const deadline = config.budgetSeconds === null ? Infinity : startedAt.getTime() + config.budgetSeconds * 1000;
  const sensorScripts = options.sensorScripts
    ? await sensorScriptTargets({ quick: config.mode === 'quick', timeoutMs: config.sensorScriptTimeoutMs, deadline, log })
    : null;

  if (wasInterrupted()) throw new Error('interrupted');
  const outcome = { config, startedAt, loadAtStart, scenarios, revocation, variants, sensorScripts };
  const record = await assembleRecord(outcome, { dataset, redisUrl: options.redisUrl, partial: options.partial });
  console.log(formatTable(record));
  recordRun(record, options.publish);
}

try {
  if (options.scale) await runScaleCurve(options.scale, { publish: options.publish, partial: options.partial }, log);
  else if (options.soak) await runSoak(options.soak, { publish: options.publish, partial: options.partial }, log);
  else await main();
  await cleanUp(log);
  log('done');
} catch (error) {
  if (wasInterrupted()) log('stopped: interrupted, nothing reported');
  else log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  await cleanUp(log);
  process.exitCode = 1;
}
