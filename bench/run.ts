// `npm run bench` (about 10-15 minutes) and `npm run bench -- --quick` (under 3 minutes): the SRE
// load benchmark. Builds a reproducible data set in a throwaway database, starts the project's
// real cluster and the minimal reference cluster, runs every scenario against both (alternating,
// so machine noise hits both), measures revocation (P7) and runs the sensor scripts (P4, P6), then
// prints the table and the targets and writes bench/results/ (see README, "Load benchmark").
//   npm run bench -- [--quick] [--seconds N] [--only small-page,mixed,...]
// Env: BENCH_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres),
//      BENCH_REDIS_URL (default redis://127.0.0.1:6379).
// Progress goes to stderr, the table to stdout. The exit code is 0 when the run completed, missed
// targets included (they are printed as missed); 1 when the kit itself failed.
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { BENCH_JWT_SECRET, kitConfig, type Server, WINDOW } from './kit/config.js';
import { buildDataset, countingCredentials, createDatabase, dropDatabase, layoutOf } from './kit/dataset.js';
import { closeLoadGenerators, type LoadFigures, runLoad } from './kit/load.js';
import { startLoopWindow } from './kit/loop-delay.js';
import { beginStopping, buildServers, freePort, killAllNow, repoRoot, request, sampleMemory, type Service, sleep, startService, stopAll } from './kit/processes.js';
import { formatTable, type Report, writeReports } from './kit/report.js';
import { type ScenarioResult, type ServerRun, summarize } from './kit/results.js';
import { measureRevocation, type RevocationFigures } from './kit/revocation.js';
import { type BuildContext, type Load, scenarios } from './kit/scenarios.js';
import { loadSensorReadings, SENSOR_PROBE_PATH, sensorDataAvailable, sensorScriptTargets } from './kit/sensor-targets.js';
import { evaluateTargets } from './kit/targets.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    seconds: { type: 'string' },
    only: { type: 'string' },
  },
});
const config = kitConfig(values.quick ? 'quick' : 'full', values.seconds ? Number(values.seconds) : undefined);
const only = values.only ? new Set(values.only.split(',').map((id) => id.trim())) : null;
const selected = scenarios.filter((scenario) => !only || only.has(scenario.id));
const runRevocation = !only || only.has('revocation');
const runSensorScripts = !only || only.has('sensor-scripts');
const WORKERS = 2;
const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

const startedAt = new Date();
const loadAtStart = loadavg()[0]!;
const log = (line: string) => console.error(`[bench ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0).padStart(4)} s] ${line}`);

// ---------------------------------------------------------------------------------------------
// Clean-up: services stopped, database dropped, also on Ctrl-C; a second Ctrl-C kills at once.

const cleanups: (() => Promise<void>)[] = [];
let cleaning: Promise<void> | null = null;
function cleanUp(): Promise<void> {
  beginStopping();
  cleaning ??= (async () => {
    for (const step of cleanups.reverse()) await step().catch((error: unknown) => log(`clean-up: ${String(error)}`));
  })();
  return cleaning;
}
let interrupted = false;
process.on('SIGINT', () => {
  if (interrupted) {
    killAllNow();
    process.exit(130);
  }
  interrupted = true;
  log('interrupted: stopping every process and dropping the database (Ctrl-C again to kill at once)');
  void cleanUp().finally(() => process.exit(130));
});
process.on('SIGTERM', () => void cleanUp().finally(() => process.exit(143)));
process.on('exit', killAllNow);

// ---------------------------------------------------------------------------------------------

/** Seconds of the pilot that sizes each server's runs of a scenario. */
const PILOT_SECONDS = 1.5;
const atCeiling = (_label: string, ceiling: number) => ceiling;

/**
 * Credentials every run could take: every pilot and run built once with counting pools, at the
 * ceilings (the most a run can be sized for).
 */
function planCredentials() {
  const counting = countingCredentials();
  const context: BuildContext = { layout: layoutOf(config.dataset), credentials: counting, seconds: config.seconds, sensorAvailable: true, rate: atCeiling };
  for (const scenario of selected) {
    for (let i = 0; i < 2; i++) scenario.build({ ...context, seconds: PILOT_SECONDS });
    // every run, and one retry per server
    for (let i = 0; i < config.order.length + 2; i++) scenario.build(context);
  }
  counting.alpha.take(config.revocationRounds + 1); // P7 rounds, the sensor probe
  return { alpha: counting.alpha.used + 20, mixed: counting.mixed.used + 20, managers: counting.managers.used + 5 };
}

/**
 * A short unmeasured run sized for the ceilings: its busiest second (x2.5, at most the ceiling)
 * sizes the measured runs' token lists, so each token is used tens of times, not once.
 */
async function pilot(service: Service, phases: Load[][]): Promise<Map<string, number>> {
  const rates = new Map<string, number>();
  for (const phase of phases) {
    const results = await Promise.all(
      phase.map((load) =>
        runLoad({ url: service.url, connections: load.connections, duration: PILOT_SECONDS, overallRate: load.overallRate, requests: load.requests, spread: true }),
      ),
    );
    phase.forEach((load, i) => rates.set(load.label, results[i]!.peakPerS));
  }
  return rates;
}

async function warm(service: Service, load: Load) {
  if (!load.warmup) return;
  await runLoad({ url: service.url, connections: load.warmup.connections, amount: load.warmup.amount, requests: load.warmup.requests });
}

async function runScenarioOn(service: Service, server: Server, position: number, phases: Load[][], eventLoop: boolean): Promise<ServerRun> {
  for (const phase of phases) for (const load of phase) await warm(service, load);
  await sleep(200); // let the warm-up's last answers settle
  const memory = sampleMemory(service.workerPids);
  let loopWindow: Awaited<ReturnType<typeof startLoopWindow>> | { error: string } | null = null;
  if (eventLoop) loopWindow = await startLoopWindow(server, service.url, WORKERS).catch((error: Error) => ({ error: error.message }));
  const loads: ServerRun['loads'] = [];
  for (const [index, phase] of phases.entries()) {
    const results = await Promise.all(
      phase.map((load) =>
        runLoad(
          {
            url: service.url,
            connections: load.connections,
            duration: load.seconds ?? config.seconds,
            overallRate: load.overallRate,
            requests: load.requests,
            spread: true,
          },
          { nice: load.nice ?? false },
        ),
      ),
    );
    phase.forEach((load, i) =>
      loads.push({
        phase: index,
        label: load.label,
        connections: load.connections,
        overallRate: load.overallRate ?? null,
        requestsInList: load.requests.length,
        figures: results[i] as LoadFigures,
      }),
    );
  }
  const loop = loopWindow && 'read' in loopWindow ? await loopWindow.read().catch((error: Error) => ({ error: error.message })) : loopWindow;
  return { server, position, loads, memory: memory.stop(), loop };
}

/** The commit measured (read-only git), marked when the work tree has uncommitted changes. */
function commitMeasured(): string {
  const git = (...args: string[]) => {
    try {
      return execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return '';
    }
  };
  const commit = git('rev-parse', '--short', 'HEAD') || 'unknown';
  return git('status', '--porcelain', '--untracked-files=no') ? `${commit} (with uncommitted changes)` : commit;
}

async function main() {
  const needs = planCredentials();
  log(`${config.mode} run: ${selected.length} scenarios, ${config.seconds} s runs, order ${config.order.join('/')}; ` +
    `${needs.alpha + needs.mixed} tokens and ${needs.managers} employees planned`);

  cleanups.push(() => stopAll());
  cleanups.push(async () => closeLoadGenerators());
  const database = await createDatabase();
  cleanups.push(() => dropDatabase(database.name));
  const dataset = await buildDataset(database, config.dataset, needs, log);
  cleanups.push(() => dataset.pool.end());

  const entries = await buildServers(log);
  const [projectPort, referencePort] = [await freePort(), await freePort()];
  const env = { DATABASE_URL: dataset.url, REDIS_URL: redisUrl, JWT_SECRET: BENCH_JWT_SECRET };
  log(`starting the project cluster (${entries.project}, ${WORKERS} workers) on ${projectPort} and the reference on ${referencePort}`);
  const services: Partial<Record<Server, Service>> = {};
  cleanups.push(async () => {
    await Promise.all(Object.values(services).map((service) => service.stop()));
  });
  const started = await Promise.allSettled([
    startService({ name: 'project', entry: entries.project, port: projectPort, workers: WORKERS, env: { ...env, LOG_LEVEL: 'warn' }, readyPath: '/readyz' }).then((s) => (services.project = s)),
    startService({ name: 'reference', entry: entries.reference, port: referencePort, workers: WORKERS, env, readyPath: '/readyz' }).then((s) => (services.reference = s)),
  ]);
  for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason;
  const project = services.project!;
  const reference = services.reference!;
  log(`project workers ${project.workerPids().join(', ')}; reference workers ${reference.workerPids().join(', ')}`);

  // sensor-data: measured when the endpoint answers; its readings are loaded only then
  const probeToken = dataset.credentials.alpha.take(1)[0]!;
  const probe = await request(project.url + SENSOR_PROBE_PATH, { headers: { authorization: `Bearer ${probeToken.raw}` } }).catch((error: Error) => error);
  const sensor = sensorDataAvailable(probe);
  let sensorReadings: { rows: number; seconds: number } | null = null;
  if (sensor.available) {
    log(`sensor-data answers: loading 15-minute readings for ${dataset.layout.sensorUnitIds.length} units`);
    sensorReadings = await loadSensorReadings(dataset.pool, dataset.layout.sensorUnitIds);
    log(`${sensorReadings.rows} readings in ${sensorReadings.seconds.toFixed(1)} s`);
  } else {
    log(sensor.reason);
  }

  const results: ScenarioResult[] = [];
  const context: BuildContext = { layout: dataset.layout, credentials: dataset.credentials, seconds: config.seconds, sensorAvailable: sensor.available, rate: atCeiling };
  for (const [index, scenario] of selected.entries()) {
    if (interrupted) throw new Error('interrupted');
    const base = { id: scenario.id, title: scenario.title, what: scenario.what, target: scenario.target ?? null };
    if (scenario.requiresSensor && !sensor.available) {
      results.push({ ...base, status: 'not measured', reason: sensor.reason, runs: [], summary: {} });
      continue;
    }
    // every other scenario swaps the roles (P,R,R,P becomes R,P,P,R): neither server always goes first
    const order = index % 2 === 0 ? config.order : config.order.map((server): Server => (server === 'project' ? 'reference' : 'project'));
    const serviceOf = (server: Server) => (server === 'project' ? project : reference);
    const estimates = new Map<Server, Map<string, number>>();
    for (const server of order.slice(0, 2)) {
      estimates.set(server, await pilot(serviceOf(server), scenario.build({ ...context, seconds: PILOT_SECONDS })));
    }
    log(`${scenario.id}: pilot ${[...estimates].map(([server, rates]) => `${server} ${[...rates.values()].map((r) => r.toFixed(0)).join('+')}/s`).join(', ')}`);
    const runs: ServerRun[] = [];
    const retried = new Set<Server>();
    for (const [position, server] of order.entries()) {
      const measured = estimates.get(server)!;
      let rate = (label: string, ceiling: number) => Math.min(ceiling, Math.max(5, 2.5 * (measured.get(label) ?? ceiling)));
      for (;;) {
        if (interrupted) throw new Error('interrupted');
        log(`${scenario.id}: ${server} (run ${position + 1} of ${order.length})`);
        const run = await runScenarioOn(serviceOf(server), server, position, scenario.build({ ...context, rate }), scenario.eventLoop ?? false);
        const headline = run.loads[0]!.figures;
        log(`  ${headline.okPerS.toFixed(1)} 2xx/s, p99 ${headline.latencyMs.p99} ms, non-2xx ${headline.non2xx}, errors ${headline.errors}`);
        // 429s: the token plan ran short of this server's real rate; once per server, plan for more
        const limited = run.loads.filter((load) => (load.figures.statusCodes['429'] ?? 0) > 0);
        if (limited.length === 0 || retried.has(server)) {
          runs.push(run);
          break;
        }
        retried.add(server);
        const previous = rate;
        const observed = new Map(run.loads.map((load) => [load.label, load.figures.peakPerS]));
        rate = (label, ceiling) => Math.min(ceiling, Math.max(2 * previous(label, ceiling), 3 * (observed.get(label) ?? 0)));
        log(`  429s in ${limited.map((load) => load.label).join(', ')}: the token plan ran short; running again with more tokens`);
      }
    }
    results.push({ ...base, status: 'measured', reason: null, runs, summary: { project: summarize(runs, 'project'), reference: summarize(runs, 'reference') } });
  }

  let revocation: RevocationFigures | { error: string } | null = null;
  if (runRevocation) {
    log(`revocation: ${config.revocationRounds} rounds of revoke-while-hammering`);
    revocation = await measureRevocation(project.url, dataset.credentials.alpha.take(config.revocationRounds), dataset.layout.heavy.unitIds[0]!, dataset.credentials.revoker).catch(
      (error: Error) => ({ error: `revocation failed: ${error.message}` }),
    );
  }

  // the sensor scripts build their own data: the clusters are stopped first so they do not compete
  await Promise.all([project.stop(), reference.stop()]);
  delete services.project;
  delete services.reference;
  const deadline = config.budgetSeconds === null ? Infinity : startedAt.getTime() + config.budgetSeconds * 1000;
  const sensorScripts = runSensorScripts
    ? await sensorScriptTargets({ quick: config.mode === 'quick', timeoutMs: config.sensorScriptTimeoutMs, deadline, log })
    : null;

  if (interrupted) throw new Error('interrupted');
  const versions = await dataset.pool.query<{ version: string }>('SELECT version()');
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const redisVersion = await redis
    .connect()
    .then(() => redis.info('server'))
    .then((info) => /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown', () => 'unknown')
    .finally(() => redis.disconnect());

  const targets = evaluateTargets({ scenarios: results, revocation, sensorScripts });
  const finishedAt = new Date();
  const report: Report = {
    kit: 'coldtrack-api bench',
    version: 1,
    mode: config.mode,
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationS: (finishedAt.getTime() - startedAt.getTime()) / 1000,
    seconds: config.seconds,
    runsPerServer: config.order.length / 2,
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryGb: totalmem() / 2 ** 30,
      node: process.version,
      postgres: versions.rows[0]?.version.split(' on ')[0] ?? 'unknown',
      redis: redisVersion,
      commit: commitMeasured(),
      loadAverage: { start: loadAtStart, end: loadavg()[0]! },
      note:
        `The load generator (autocannon, one process per load) runs on the same ${cpus().length} cores as both clusters, PostgreSQL and Redis: ` +
        'absolute figures are this machine\'s; the project/reference ratios are what carries over.',
    },
    services: {
      project: { command: 'node --import tsx src/server.ts (WORKERS=2, REDIS_URL, LOG_LEVEL=warn)', workers: WORKERS },
      reference: { command: 'node --import tsx bench/reference/server.ts (WORKERS=2)', workers: WORKERS },
    },
    dataset: {
      database: dataset.name,
      window: `${WINDOW.first} .. ${WINDOW.last} (${WINDOW.days} days)`,
      size: config.dataset,
      counts: dataset.counts,
      buildSeconds: dataset.buildSeconds,
      sensorReadings,
    },
    sensor,
    scenarios: results,
    revocation,
    targets,
    notes: [
      'req/s is 2xx responses per second over the run; latency percentiles are autocannon\'s, averaged over the runs of each server; max is the worst run\'s.',
      'Each run uses tokens (and employees) that no other run used, spread so no token exceeds the 100/min limit: a non-2xx count above 0 is a finding, not the limit.',
      'P5 reads the project\'s event-loop delay from GET /metrics (cluster aggregate: the mean of the workers\' p99, the max of their max), the worst project run; the reference reports per worker.',
      'P8 is each worker\'s peak RSS while serving the largest pages: VmHWM from /proc/<worker>/status, reset at the start of each run (clear_refs 5); VmRSS sampled every 100 ms is shown beside it.',
    ],
  };

  console.log(formatTable(report));
  const files = writeReports(report, new URL('results/', import.meta.url));
  console.log(`\nreport: ${files.json}\n        ${files.html}\n        ${files.png ?? `no PNG: ${files.pngError}`}`);
  console.log('        bench/results/latest.json, latest.html');
}

try {
  await main();
  await cleanUp();
  log('done');
} catch (error) {
  if (interrupted) log('stopped: interrupted, nothing reported');
  else log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  await cleanUp();
  process.exitCode = 1;
}
