// The two clusters under test: the project's real one (dist/src/main.js) and the reference
// (dist/bench/reference/server.js), compiled first, each started in its own process group on
// 127.0.0.1 and a free port, waited for (bounded), and stopped with SIGTERM then SIGKILL of the group.
import { spawn } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../src/free-port.js';
import { sleep, track, within } from './processes.js';
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
  /** the last lines the service printed (for an error message) */
  tail(): string;
  stop(): Promise<void>;
}

// variables of the developer's shell that would change what the cluster does
const SCRUBBED = [
  'JWT_PUBLIC_KEY',
  'JWT_ISSUER',
  'JWT_AUDIENCE',
  'TRUST_PROXY',
  'DB_POOL_MAX',
  'ROLLUP_THREADS',
  'DATA_DIR',
  'NODE_OPTIONS',
  // what the variants (kit/variants.ts) set on their cluster alone
  'COLDTRACK_BENCH_WITHOUT_TOKEN_USAGE',
];
/** OTEL_EXPORTER_OTLP_ENDPOINT and the like would turn tracing on in the cluster as shipped */
const SCRUBBED_PREFIX = 'OTEL_';

export async function startService(options: {
  name: string;
  /** the reference's build, else the project's */
  build?: Server;
  entry: string;
  port: number;
  workers: number;
  env: Record<string, string>;
  readyPath: string;
  timeoutMs?: number;
}): Promise<Service> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (SCRUBBED.includes(name) || name.startsWith(SCRUBBED_PREFIX)) delete env[name];
  Object.assign(env, options.env, { PORT: String(options.port), HOST: '127.0.0.1', WORKERS: String(options.workers) });
  // compiled JavaScript (the kit's build, see buildServers) runs on plain node; TypeScript via tsx
  const loader = options.entry.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const child = spawn(process.execPath, [...loader, options.entry], {
    cwd: repoRoot,
    env,
    detached: true, // its own process group: the workers die with it
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child);
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-8000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${options.port}`;

  const service: Service = {
    name: options.name,
    build: options.build ?? 'project',
    url,
    workerPids: () => childPids(child.pid!),
    tail: () => output.trim().split('\n').slice(-15).join('\n'),
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

  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${options.name} exited during start-up:\n${service.tail()}`);
    }
    const ready = await request(url + options.readyPath, { timeoutMs: 2000 }).then(
      (answer) => answer.status === 200,
      () => false,
    );
    if (ready && service.workerPids().length >= options.workers) return service;
    if (Date.now() > deadline) {
      await service.stop();
      throw new Error(`${options.name} was not ready within ${(options.timeoutMs ?? 60_000) / 1000} s:\n${service.tail()}`);
    }
    await sleep(250);
  }
}

/**
 * Compiles both servers as they run in production: the project with `npm run build` (dist/src,
 * dist/workers, dist/sql) and the reference next to it (dist/bench/reference). Measuring code run
 * through tsx would add its loader to every worker's memory (~55 MB) and start-up. Returns the
 * entry points. `reference: false` (the soak) compiles the project only.
 */
export async function buildServers(
  log: (line: string) => void,
  { reference = true } = {},
): Promise<{ project: string; reference: string }> {
  const started = performance.now();
  const run = (args: string[]) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn('npm', args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
      track(child);
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`npm ${args.join(' ')} failed:\n${output.slice(-3000)}`))));
    });
  await run(['run', '--silent', 'build']);
  if (reference) {
    await run(['exec', '--', 'tsc', '-p', 'bench/reference/tsconfig.json']);
    // the baseline queries the reference reads beside its compiled project-sql.js (tsc copies no .sql)
    copyFileSync(join(repoRoot, 'bench/reference/analytics-baseline.sql'), join(repoRoot, 'dist/bench/reference/analytics-baseline.sql'));
  }
  log(
    `compiled the project (npm run build)${reference ? ' and the reference' : ''} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return { project: 'dist/src/main.js', reference: 'dist/bench/reference/server.js' };
}

/**
 * Compiles and starts both clusters side by side on the data set's database. Each is put in
 * `running` as soon as it is up, so the clean-up also stops one whose partner failed to start.
 */
export async function startClusters(
  options: { databaseUrl: string; redisUrl: string; running: Partial<Record<Server, Service>> },
  log: (line: string) => void,
): Promise<Record<Server, Service>> {
  const { running } = options;
  const entries = await buildServers(log);
  const [projectPort, referencePort] = [await freePort(), await freePort()];
  const env = { DATABASE_URL: options.databaseUrl, REDIS_URL: options.redisUrl, JWT_SECRET: BENCH_JWT_SECRET };
  log(`starting the project cluster (${entries.project}, ${WORKERS} workers) on ${projectPort} and the reference on ${referencePort}`);
  const started = await Promise.allSettled([
    startService({
      name: 'project',
      entry: entries.project,
      port: projectPort,
      workers: WORKERS,
      // P17's receiver listens on loopback, which webhooks are refused without this (docs/webhooks.md)
      env: { ...env, LOG_LEVEL: 'warn', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' },
      readyPath: '/readyz',
    }).then((s) => (running.project = s)),
    startService({
      name: 'reference',
      build: 'reference',
      entry: entries.reference,
      port: referencePort,
      workers: WORKERS,
      env,
      readyPath: '/readyz',
    }).then((s) => (running.reference = s)),
  ]);
  for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason;
  const clusters = { project: running.project!, reference: running.reference! };
  log(`project workers ${clusters.project.workerPids().join(', ')}; reference workers ${clusters.reference.workerPids().join(', ')}`);
  return clusters;
}

/**
 * The project's cluster once more, from the build startClusters made, with `env` added: the
 * variants (kit/variants.ts) start it fresh as shipped and beside it with tracing on, usage counting off
 * or bulk streams never yielding.
 */
export async function startProjectVariant(
  options: { name: string; databaseUrl: string; redisUrl: string; env: Record<string, string> },
  log: (line: string) => void,
): Promise<Service> {
  const port = await freePort();
  log(`starting ${options.name} (dist/src/main.js, ${WORKERS} workers) on ${port}`);
  return startService({
    name: options.name,
    entry: 'dist/src/main.js',
    port,
    workers: WORKERS,
    env: {
      DATABASE_URL: options.databaseUrl,
      REDIS_URL: options.redisUrl,
      JWT_SECRET: BENCH_JWT_SECRET,
      LOG_LEVEL: 'warn',
      ...options.env,
    },
    readyPath: '/readyz',
  });
}

/** Stops whichever clusters are running (idempotent: they leave `running`). */
export async function stopClusters(running: Partial<Record<Server, Service>>) {
  const services = Object.values(running);
  delete running.project;
  delete running.reference;
  await Promise.all(services.map((service) => service.stop()));
}
