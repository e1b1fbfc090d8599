// The clusters under test, compiled first: the project's (dist/src/main.js) and the reference
// (dist/bench/reference/server.js), each in its own process group on a free loopback port.
import { spawn } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../src/free-port.js';
import { runChild, sleep, track, within } from './processes.js';
import { BENCH_JWT_SECRET, type Server, WORKERS } from './config.js';
import { request } from './load.js';
import { repoRoot } from './checkout.js';
import { childPids } from './worker-memory.js';

export interface Service {
  name: string;
  /** which server it runs: the event loop is read from a project's /metrics, the reference's /__loop */
  build: Server;
  url: string;
  workerPids(): number[];
  stop(): Promise<void>;
}

// variables of the developer's shell that would change what the cluster does, and the one a variant sets
const SCRUBBED = [
  'JWT_PUBLIC_KEY',
  'JWT_ISSUER',
  'JWT_AUDIENCE',
  'TRUST_PROXY',
  'DB_POOL_MAX',
  'ROLLUP_THREADS',
  'DATA_DIR',
  'NODE_OPTIONS',
  'COLDTRACK_BENCH_WITHOUT_TOKEN_USAGE',
];
/** OTEL_EXPORTER_OTLP_ENDPOINT and the like would turn tracing on in the cluster as shipped */
const SCRUBBED_PREFIX = 'OTEL_';
const START_LIMIT_MS = 60_000;
const PROJECT_ENTRY = 'dist/src/main.js';

async function startService(name: string, build: Server, entry: string, variables: Record<string, string>): Promise<Service> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const variable of Object.keys(env)) if (SCRUBBED.includes(variable) || variable.startsWith(SCRUBBED_PREFIX)) delete env[variable];
  Object.assign(env, variables, { PORT: String(port), HOST: '127.0.0.1', WORKERS: String(WORKERS) });
  // its own process group: the workers die with it
  const child = spawn(process.execPath, [entry], { cwd: repoRoot, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  track(child);
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-8000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const tail = () => output.trim().split('\n').slice(-15).join('\n');

  const service: Service = {
    name,
    build,
    url,
    workerPids: () => childPids(child.pid!),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await within(exited, 15_000);
      }
      try {
        process.kill(-child.pid!, 'SIGKILL'); // anything left of the group (a worker that hung)
      } catch {
        // the group is gone
      }
      await within(exited, 2000);
    },
  };

  const deadline = Date.now() + START_LIMIT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} exited during start-up:\n${tail()}`);
    const ready = await request(`${url}/readyz`, { timeoutMs: 2000 }).then(
      (answer) => answer.status === 200,
      () => false,
    );
    if (ready && service.workerPids().length >= WORKERS) return service;
    if (Date.now() > deadline) {
      await service.stop();
      throw new Error(`${name} was not ready within ${START_LIMIT_MS / 1000} s:\n${tail()}`);
    }
    await sleep(250);
  }
}

/**
 * Compiles the project (`npm run build`) and, unless `reference: false`, the reference beside it:
 * as they run in production (tsx would weigh on every worker's memory and start-up).
 */
export async function buildServers(
  log: (line: string) => void,
  { reference = true } = {},
): Promise<{ project: string; reference: string }> {
  const started = performance.now();
  const run = async (args: string[]) => {
    const child = await runChild('npm', args);
    if (child.failure !== null) throw new Error(`npm ${args.join(' ')} failed:\n${`${child.stdout}${child.stderr}`.slice(-3000)}`);
  };
  await run(['run', '--silent', 'build']);
  if (reference) {
    await run(['exec', '--', 'tsc', '-p', 'bench/reference/tsconfig.json']);
    // the baseline queries the reference reads beside its compiled project-sql.js (tsc copies no .sql)
    copyFileSync(join(repoRoot, 'bench/reference/analytics-baseline.sql'), join(repoRoot, 'dist/bench/reference/analytics-baseline.sql'));
  }
  log(
    `compiled the project (npm run build)${reference ? ' and the reference' : ''} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return { project: PROJECT_ENTRY, reference: 'dist/bench/reference/server.js' };
}

/** The project's cluster from the last build, with `env` added (the variants', P7's, the soak's; the run's own). */
export async function startProjectCluster(
  options: { name: string; databaseUrl: string; redisUrl: string; env: Record<string, string> },
  log: (line: string) => void,
): Promise<Service> {
  log(`starting ${options.name} (${PROJECT_ENTRY}, ${WORKERS} workers)`);
  const env = { DATABASE_URL: options.databaseUrl, REDIS_URL: options.redisUrl, JWT_SECRET: BENCH_JWT_SECRET, LOG_LEVEL: 'warn' };
  return startService(options.name, 'project', PROJECT_ENTRY, { ...env, ...options.env });
}

/** Compiles and starts both clusters side by side, each in `running` once up (so the clean-up stops one whose partner failed). */
export async function startClusters(
  options: { databaseUrl: string; redisUrl: string; running: Partial<Record<Server, Service>> },
  log: (line: string) => void,
): Promise<Record<Server, Service>> {
  const { running, databaseUrl, redisUrl } = options;
  const entries = await buildServers(log);
  const started = await Promise.allSettled([
    // P17's receiver listens on loopback, which webhooks are refused without this (docs/webhooks.md)
    startProjectCluster({ name: 'project', databaseUrl, redisUrl, env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' } }, log).then(
      (service) => (running.project = service),
    ),
    startService('reference', 'reference', entries.reference, {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      JWT_SECRET: BENCH_JWT_SECRET,
    }).then((service) => (running.reference = service)),
  ]);
  for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason;
  const clusters = { project: running.project!, reference: running.reference! };
  log(`project workers ${clusters.project.workerPids().join(', ')}; reference workers ${clusters.reference.workerPids().join(', ')}`);
  return clusters;
}

/** Stops whichever clusters are running (idempotent: they leave `running`). */
export async function stopClusters(running: Partial<Record<Server, Service>>) {
  const services = Object.values(running);
  delete running.project;
  delete running.reference;
  await Promise.all(services.map((service) => service.stop()));
}
