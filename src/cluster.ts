// The cluster primary: forks WORKERS Fastify workers sharing one port, replaces a crashed worker
// (with backoff; a crash loop stops the service loudly), rolls the workers on SIGHUP with no
// failed request (the new worker listens before the old one drains), stops them all on
// SIGTERM/SIGINT within a deadline, and answers workers' metrics requests with the cluster total
// (the workers' registries summed, plus the primary's own: cluster_worker_restarts_total).
import cluster, { type Address, type Worker } from 'node:cluster';
import { AggregatorRegistry, Counter, Registry } from 'prom-client';

export const METRICS_REQUEST = 'coldtrack:cluster-metrics-request';
export const METRICS_RESPONSE = 'coldtrack:cluster-metrics-response';

const CRASH_WINDOW_MS = 60_000;
const MAX_CRASHES_IN_WINDOW = 5;
/** How long a stopping worker may take before it is killed (docker-compose's stop_grace_period exceeds it). */
export const SHUTDOWN_DEADLINE_MS = 20_000;

export interface PrimaryOptions {
  workers: number;
  /** Environment every worker gets (the resolved database URL and JWT secret). */
  env: Record<string, string>;
  /** Extra node flags for every worker (the heap limits of config.ts heapFlags) */
  execArgv?: string[];
  log: (message: string, fields?: Record<string, unknown>) => void;
  /** Called once, with the address, when the first worker listens. */
  onListening?: (address: string) => void;
  /** Called after every worker has exited on shutdown. */
  onStopped?: () => Promise<void>;
}

/** The primary's own metrics, appended to the workers' aggregate on every scrape. */
export function createPrimaryMetrics() {
  const registry = new Registry();
  const workerRestarts = new Counter({
    name: 'cluster_worker_restarts_total',
    help: 'Cluster workers replaced after dying unasked (a crash, a kill, out of memory); rolling restarts are not counted',
    registers: [registry],
  });
  return { registry, workerRestarts };
}

export function runPrimary(options: PrimaryOptions) {
  new ClusterPrimary(options).start();
}

/**
 * The primary's jobs, one method each: fork a worker (and answer its metrics requests), replace a
 * crashed one, roll them on SIGHUP, stop them on SIGTERM/SIGINT.
 */
class ClusterPrimary {
  private readonly aggregator = new AggregatorRegistry();
  private readonly own = createPrimaryMetrics();
  /** workers asked to exit by a rolling restart: their exit is not a crash */
  private readonly retiring = new Set<Worker>();
  /** when the recent crashes happened, within CRASH_WINDOW_MS */
  private readonly crashes: number[] = [];
  private stopping = false;
  private rolling = false;
  private announced = false;

  constructor(private readonly options: PrimaryOptions) {}

  start() {
    cluster.setupPrimary({ execArgv: [...process.execArgv, ...(this.options.execArgv ?? [])] });
    cluster.on('exit', (worker, code, signal) => this.onWorkerExit(worker, code, signal));
    process.on('SIGHUP', () => void this.rollingRestart());
    process.on('SIGTERM', () => void this.stop(0));
    process.on('SIGINT', () => void this.stop(0));
    for (let i = 0; i < this.options.workers; i++) this.fork();
  }

  private fork(): Worker {
    const worker = cluster.fork(this.options.env);
    worker.on('message', (message: { type?: string; id?: number }) => {
      if (message?.type === METRICS_REQUEST) void this.answerMetricsRequest(worker, message.id);
    });
    worker.once('listening', (address) => this.announceFirstListening(address));
    return worker;
  }

  private async answerMetricsRequest(worker: Worker, id: number | undefined) {
    try {
      // metric families of the two never share a name: the texts concatenate
      const body = `${await this.aggregator.clusterMetrics()}\n${await this.own.registry.metrics()}`;
      worker.send({ type: METRICS_RESPONSE, id, body, contentType: this.aggregator.contentType });
    } catch (error) {
      worker.send({ type: METRICS_RESPONSE, id, error: String(error) });
    }
  }

  private announceFirstListening(address: Address) {
    if (this.announced) return;
    this.announced = true;
    const host = address.address === '::' || address.address === '0.0.0.0' ? '127.0.0.1' : address.address;
    this.options.onListening?.(`http://${host}:${address.port}`);
  }

  /** A worker that died unasked is replaced with backoff; past MAX_CRASHES_IN_WINDOW the service stops. */
  private onWorkerExit(worker: Worker, code: number, signal: string) {
    if (this.stopping || this.retiring.delete(worker)) return;
    const now = Date.now();
    this.crashes.push(now);
    while (this.crashes.length && this.crashes[0]! < now - CRASH_WINDOW_MS) this.crashes.shift();
    if (this.crashes.length > MAX_CRASHES_IN_WINDOW) {
      this.options.log(`crash loop: ${this.crashes.length} worker crashes in ${CRASH_WINDOW_MS / 1000} s; stopping the service`, {
        code,
        signal,
      });
      void this.stop(1);
      return;
    }
    this.own.workerRestarts.inc();
    const delay = Math.min(100 * 2 ** (this.crashes.length - 1), 5000);
    this.options.log(`worker ${worker.process.pid} died (${signal ?? `code ${code}`}); replacing it in ${delay} ms`);
    setTimeout(() => !this.stopping && this.fork(), delay);
  }

  /** Each worker in turn: a fresh one listens first, then the old one drains and exits. */
  private async rollingRestart() {
    // one restart at a time: an overlapping one would fork a replacement for the same worker twice
    if (this.rolling) {
      this.options.log('SIGHUP: a rolling restart is already under way; ignored');
      return;
    }
    this.rolling = true;
    this.options.log('SIGHUP: rolling restart of the workers');
    try {
      for (const old of Object.values(cluster.workers ?? {})) {
        if (!old || old.isDead() || this.stopping) continue;
        const fresh = this.fork();
        if (!(await listening(fresh))) {
          this.options.log('rolling restart stopped: a new worker exited before it listened; the old workers keep serving');
          return;
        }
        this.retiring.add(old);
        old.process.kill('SIGTERM'); // drains in-flight requests, then exits
        await waitForExit(old, SHUTDOWN_DEADLINE_MS);
      }
      this.options.log('rolling restart done');
    } finally {
      this.rolling = false;
    }
  }

  private async stop(exitCode: number) {
    if (this.stopping) return;
    this.stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => !!worker);
    for (const worker of workers) worker.process.kill('SIGTERM');
    await Promise.all(workers.map((worker) => waitForExit(worker, SHUTDOWN_DEADLINE_MS)));
    await this.options.onStopped?.();
    process.exit(exitCode);
  }
}

/** true once the worker listens; false if it exits first (the exit handler replaces it). */
const listening = (worker: Worker) =>
  new Promise<boolean>((resolve) => {
    worker.once('listening', () => resolve(true));
    worker.once('exit', () => resolve(false));
  });

/** Resolves when the worker has exited, killing it (SIGKILL) if it takes longer than `ms`. */
const waitForExit = (worker: Worker, ms: number) =>
  new Promise<void>((resolve) => {
    if (worker.isDead()) return resolve();
    const timer = setTimeout(() => {
      worker.process.kill('SIGKILL');
      resolve();
    }, ms);
    worker.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** In a worker: the cluster's metrics, aggregated by the primary. */
export function requestClusterMetrics(timeoutMs = 5000): Promise<{ contentType: string; body: string }> {
  const id = Math.floor(Math.random() * 2 ** 31);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.off('message', onMessage);
      reject(new Error('the cluster primary did not answer the metrics request'));
    }, timeoutMs);
    function onMessage(message: { type?: string; id?: number; body?: string; contentType?: string; error?: string }) {
      if (message?.type !== METRICS_RESPONSE || message.id !== id) return;
      clearTimeout(timer);
      process.off('message', onMessage);
      if (message.error !== undefined) reject(new Error(message.error));
      else resolve({ contentType: message.contentType!, body: message.body! });
    }
    process.on('message', onMessage);
    process.send!({ type: METRICS_REQUEST, id });
  });
}
