// The processes of a run: the project's real cluster (dist/src/server.js, WORKERS=2) and the reference
// cluster (bench/reference/server.ts), each started in its own process group on 127.0.0.1 and a
// free port, waited for (bounded), and stopped with SIGTERM then SIGKILL of the group. Every child
// is registered so an error or Ctrl-C still kills it. Workers are found as the primary's children
// in /proc, and their resident memory is sampled from /proc/<pid>/status (VmRSS every 100 ms, and
// VmHWM, the kernel's exact peak, reset at the start of each run).
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../src/free-port.js';

export { freePort };

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

const running = new Set<ChildProcess>();
let stopping = false;

/** Clean-up has begun: nothing new may start (a late spawn is interrupted at once). */
export const isStopping = () => stopping;
export const beginStopping = () => {
  stopping = true;
};

/** Last resort (process 'exit', a second Ctrl-C): SIGKILL every process group we started. */
export function killAllNow() {
  for (const child of running) {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  running.clear();
}

/**
 * Clean-up: SIGINT to every process group still running (the sensor scripts drop their databases
 * on it; the clusters and generators stop), then SIGKILL what is left after `graceMs`.
 */
export async function stopAll(graceMs = 10_000) {
  stopping = true;
  const children = [...running];
  const exits = children.map((child) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()))));
  for (const child of children) {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGINT');
    } catch {
      // already gone
    }
  }
  await within(Promise.all(exits), graceMs);
  killAllNow();
}

export function track(child: ChildProcess) {
  if (stopping && child.pid) {
    try {
      process.kill(-child.pid, 'SIGINT');
    } catch {
      // gone
    }
  }
  running.add(child);
  child.once('exit', () => running.delete(child));
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `promise`, or undefined after `ms` (the timer is cleared either way: nothing keeps the process up). */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export interface HttpAnswer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** One request; `agent: false` opens a fresh connection (the cluster hands it to the next worker). */
export function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; agent?: http.Agent | false; timeoutMs?: number } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: options.method ?? 'GET', headers: options.headers, agent: options.agent ?? false, timeout: options.timeoutMs ?? 30_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout after ${options.timeoutMs ?? 30_000} ms: ${url}`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

// ---------------------------------------------------------------------------------------------
// /proc

/**
 * Direct children of a process that run node (the cluster's workers), from /proc/<pid>/stat; an
 * esbuild service (a server run through tsx), also a child, is left out.
 */
function childPids(parent: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== parent) continue;
      const argv0 = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')[0];
      if (argv0 === process.execPath || argv0?.endsWith('/node') || argv0 === 'node') found.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return found.sort((a, b) => a - b);
}

/** VmRSS and VmHWM (peak) of a process, in MB; null once it has exited. */
function memoryOf(pid: number): { rssMb: number; peakMb: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

export interface WorkerMemory {
  pid: number;
  /** highest VmRSS seen by the sampler during the run */
  maxRssMb: number;
  /** VmHWM at the end: the kernel's peak RSS, spikes between samples included */
  peakMb: number;
  /** VmHWM was reset at the start of the run: peakMb is this run's peak (else: since the worker started) */
  peakOfRun: boolean;
}

/** Resets the kernel's peak-RSS mark (VmHWM) to the current RSS: clear_refs "5" (Linux >= 4.0). */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false; // not permitted here: VmHWM then holds the peak since the worker started
  }
}

/** Samples every worker's RSS every `everyMs` until stop(). */
export function sampleMemory(workerPids: () => number[], everyMs = 100) {
  const seen = new Map<number, WorkerMemory>();
  const reset = new Set(workerPids().filter(resetPeak));
  const sample = () => {
    for (const pid of workerPids()) {
      const memory = memoryOf(pid);
      if (!memory) continue;
      const entry = seen.get(pid) ?? { pid, maxRssMb: 0, peakMb: 0, peakOfRun: reset.has(pid) };
      entry.maxRssMb = Math.max(entry.maxRssMb, memory.rssMb);
      entry.peakMb = Math.max(entry.peakMb, memory.peakMb);
      seen.set(pid, entry);
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop(): WorkerMemory[] {
      clearInterval(timer);
      sample();
      return [...seen.values()].sort((a, b) => a.pid - b.pid);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Services

export interface Service {
  name: string;
  url: string;
  primaryPid: number;
  workerPids(): number[];
  /** the last lines the service printed (for an error message) */
  tail(): string;
  stop(): Promise<void>;
}

// variables of the developer's shell that would change what the cluster does
const SCRUBBED = ['JWT_PUBLIC_KEY', 'JWT_ISSUER', 'JWT_AUDIENCE', 'TRUST_PROXY', 'DB_POOL_MAX', 'ROLLUP_THREADS', 'DATA_DIR', 'NODE_OPTIONS'];

export async function startService(options: {
  name: string;
  entry: string;
  port: number;
  workers: number;
  env: Record<string, string>;
  readyPath: string;
  timeoutMs?: number;
}): Promise<Service> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SCRUBBED) delete env[name];
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
    url,
    primaryPid: child.pid!,
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
 * entry points.
 */
export async function buildServers(log: (line: string) => void): Promise<{ project: string; reference: string }> {
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
  await run(['exec', '--', 'tsc', '-p', 'bench/reference/tsconfig.json']);
  log(`compiled the project (npm run build) and the reference in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { project: 'dist/src/server.js', reference: 'dist/bench/reference/server.js' };
}
