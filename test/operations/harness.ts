// Real processes for the operations tests: the service as a node:cluster (src/main.ts) on a
// port of its own, a private redis-server each test file can kill and restart, plain HTTP on
// fresh connections (so the primary spreads them over the workers), and a fresh database with a
// company and tokens to call it with. Every child is killed in teardown; every wait is bounded.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Test } from 'tap';
import { mintEmployeeJwt } from '../../src/auth/jwt.js';
import { createTestApp, TEST_JWT_SECRET, type TestApp } from '../helpers/app.js';
import { createCompany, type CompanyFixture } from '../helpers/fixtures.js';
import { ALL_SCOPES, issueToken } from '../helpers/tokens.js';
import { freePort } from '../../src/free-port.js';
import { reapOnExit } from '../helpers/reaper.js';
import { nodeArgs } from '../helpers/entry.js';

export { freePort };

interface Teardown {
  teardown(fn: () => unknown): void;
  /** tap's: whether every assertion so far passed */
  passing?(): boolean;
}

export const DATA_PATH = '/api/v1/analytics/utilization?page_size=1';

/** Polls until `check` returns a value other than undefined/false, or throws after timeoutMs. */
export async function until<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

function waitForExit(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

// ---------------------------------------------------------------------------------------------
// Redis

export interface RedisServer {
  port: number;
  url: string;
  /** SIGKILL: an outage, not a clean shutdown. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: nothing was saved). */
  start(): Promise<void>;
  /** SIGSTOP / SIGCONT: connections stay open and go unanswered (a hung server, a partition). */
  pause(): void;
  resume(): void;
}

export async function startRedis(t: Teardown): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | null = null;

  async function start() {
    const started = reapOnExit(
      spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1', '--daemonize', 'no'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    child = started;
    let output = '';
    started.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    started.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await until(
      `redis-server on ${port}`,
      () => {
        if (started.exitCode !== null) throw new Error(`redis-server exited:\n${output}`);
        return /Ready to accept connections/.test(output);
      },
      10_000,
      20,
    );
  }

  async function kill() {
    if (!child) return;
    const exited = waitForExit(child);
    child.kill('SIGKILL');
    await exited;
    child = null;
  }

  await start();
  t.teardown(kill);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    start,
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
  };
}

// ---------------------------------------------------------------------------------------------
// The service as a cluster

export interface LogLine {
  pid: number;
  msg?: string;
  reqId?: string;
  role?: string;
  [field: string]: unknown;
}

export interface Cluster {
  child: ChildProcess;
  pid: number;
  port: number;
  baseUrl: string;
  /** Everything the primary and the workers wrote, raw. */
  output(): string;
  /** JSON log lines (workers' pino lines and the primary's lines). */
  logs(): LogLine[];
  /** Pids of the workers, in the order they announced they were listening. */
  listeningPids(): number[];
  /** Live child processes of the primary that are workers (from /proc via ps). */
  workerPids(): number[];
  /** The pid of the worker that logged this request id, once it has. */
  pidOfRequest(requestId: string): number | undefined;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  signal(signal: NodeJS.Signals): void;
  /** To the primary's whole process group, as a terminal's Ctrl-C or systemd's stop does (needs `detached`). */
  signalGroup(signal: NodeJS.Signals): void;
}

export interface ClusterOptions {
  workers?: number;
  timeoutMs?: number;
  /** The primary leads a process group of its own (with its workers), for signalGroup. */
  detached?: boolean;
}

export async function startCluster(t: Teardown, env: Record<string, string>, options: ClusterOptions = {}): Promise<Cluster> {
  const workers = options.workers ?? 2;
  const port = await freePort();
  const child = reapOnExit(
    spawn(process.execPath, nodeArgs('src/main.ts'), {
      env: {
        PATH: process.env.PATH ?? '',
        HOST: '127.0.0.1',
        PORT: String(port),
        LOG_LEVEL: 'info',
        WORKERS: String(workers),
        JWT_SECRET: TEST_JWT_SECRET,
        // many test files run clusters at once against one PostgreSQL
        DB_POOL_MAX: '3',
        ROLLUP_THREADS: '1',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: options.detached ?? false,
    }),
  );
  let output = '';
  const lines: LogLine[] = [];
  const partial = { stdout: '', stderr: '' };
  const collect = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    const text = chunk.toString();
    output += text;
    const parts = (partial[stream] + text).split('\n');
    partial[stream] = parts.pop()!;
    for (const part of parts) {
      if (!part.startsWith('{')) continue;
      try {
        lines.push(JSON.parse(part) as LogLine);
      } catch {
        // not a log line
      }
    }
  };
  child.stdout!.on('data', collect('stdout'));
  child.stderr!.on('data', collect('stderr'));
  const exited = waitForExit(child);
  t.teardown(async () => {
    // the primary first (it would respawn), then any worker it left behind
    const orphans = cluster.workerPids();
    // a file that failed against a cluster shows the service's last words (a primary stopped by a
    // crash loop or a port taken fails the requests with nothing but ECONNREFUSED)
    if (t.passing?.() === false) process.stderr.write(`the service on port ${port}, its output's end:\n${output.slice(-4000)}\n`);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    for (const pid of orphans) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });

  const listeningPids = () => {
    const pids: number[] = [];
    for (const line of lines) if (line.msg?.startsWith('Server listening at') && !pids.includes(line.pid)) pids.push(line.pid);
    return pids;
  };

  const cluster: Cluster = {
    child,
    pid: child.pid!,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    output: () => output,
    logs: () => lines,
    listeningPids,
    workerPids() {
      let listing: string;
      try {
        listing = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(child.pid)], { encoding: 'utf8' });
      } catch {
        return []; // ps exits 1 when there is no child
      }
      return listing
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => /src\/main\.[jt]s/.test(line))
        .map((line) => Number(line.split(/\s+/)[0]));
    },
    pidOfRequest: (requestId) => lines.find((line) => line.reqId === requestId)?.pid,
    exited,
    signal: (signal) => void child.kill(signal),
    signalGroup(signal) {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // the group is gone: every process of it has exited
      }
    },
  };

  await until(
    `${workers} workers listening`,
    () => {
      if (child.exitCode !== null) throw new Error(`the service exited early:\n${output}`);
      return listeningPids().length >= workers;
    },
    options.timeoutMs ?? 40_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n${output}`);
  });
  return cluster;
}

// ---------------------------------------------------------------------------------------------
// HTTP

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  ms: number;
  json<T = Record<string, unknown>>(): T;
}

export interface SendOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** false (default): a fresh connection, closed after the response. */
  agent?: http.Agent | false;
  timeoutMs?: number;
}

/** One request; rejects on a socket error or after timeoutMs. */
export function send(baseUrl: string, path: string, options: SendOptions = {}): Promise<Reply> {
  const started = performance.now();
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = { ...options.headers };
  if (payload !== undefined) {
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const request = http.request(
      new URL(path, baseUrl),
      { method: options.method ?? 'GET', headers, agent: options.agent ?? false, timeout: options.timeoutMs ?? 10_000 },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('error', reject);
        response.on('end', () =>
          resolve({
            status: response.statusCode!,
            headers: response.headers,
            body,
            ms: performance.now() - started,
            json: () => JSON.parse(body),
          }),
        );
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer to ${path} within ${options.timeoutMs ?? 10_000} ms`)));
    request.on('error', reject);
    request.end(payload);
  });
}

/** Sum of a Prometheus metric's samples whose labels include every given label. */
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-zA-Z_:][\w:]*)(\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = match[3] ?? '';
    if (Object.entries(labels).every(([key, value]) => present.includes(`${key}="${value}"`))) sum += Number(match[4]);
  }
  return sum;
}

// ---------------------------------------------------------------------------------------------
// A world to call the service with

export interface World {
  /** An in-process app on the same database (limits lifted): issues tokens as an employee would. */
  ctx: TestApp;
  acme: CompanyFixture;
  other: CompanyFixture;
  databaseUrl: string;
  issue(): Promise<{ id: string; token: string; headers: { authorization: string } }>;
  jwt(userId: number): Promise<string>;
}

export async function createWorld(t: Teardown): Promise<World> {
  const ctx = await createTestApp(t);
  const acme = await createCompany(ctx.db.pool, 'Acme');
  const other = await createCompany(ctx.db.pool, 'Other');
  return {
    ctx,
    acme,
    other,
    databaseUrl: ctx.db.url,
    issue: () => issueToken(ctx, acme.employeeId),
    jwt: (userId) => mintEmployeeJwt({ secret: TEST_JWT_SECRET, userId, ttlSeconds: 3600 }),
  };
}

let requestTag = 0;

/**
 * n data requests at once, request i to clusters[i % clusters.length], each on its own connection
 * (a cluster's primary deals them to its workers); `workers`: how many distinct workers (of all
 * the clusters) answered, from the request ids in their logs; `slowest`: the longest reply, ms.
 */
export async function dataRequests(clusters: Cluster[], n: number, headers: Record<string, string>, path = DATA_PATH) {
  const tag = `req-${process.pid}-${requestTag++}`;
  const targets = Array.from({ length: n }, (_, i) => clusters[i % clusters.length]!);
  const replies = await Promise.all(
    targets.map((cluster, i) => send(cluster.baseUrl, path, { headers: { ...headers, 'x-request-id': `${tag}-${i}` }, timeoutMs: 8000 })),
  );
  const workers = await until(
    'the requests in the logs',
    () => {
      const found = targets.map((cluster, i) => {
        const pid = cluster.pidOfRequest(`${tag}-${i}`);
        return pid === undefined ? undefined : `${clusters.indexOf(cluster)}:${pid}`;
      });
      return found.every((worker) => worker !== undefined) && new Set(found as string[]);
    },
    8000,
  );
  return { replies, workers: workers.size, byWorker: [...workers].sort(), slowest: Math.max(...replies.map((reply) => reply.ms)) };
}

/** Counts of each status in a list of replies: { 200: 100, 429: 10 }. */
export function statusCounts(replies: Reply[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const reply of replies) counts[reply.status] = (counts[reply.status] ?? 0) + 1;
  return counts;
}

/**
 * An employee managing tokens on one cluster as the revocation tests do: revoke, revoke as a
 * client honouring Retry-After would (a 503 is tried again for up to `revokeRetryMs`), retrieve,
 * and warm a token into the cache of each of the cluster's `workers`.
 */
export function tokenManagement(cluster: Cluster, jwt: Record<string, string>, options: { workers: number; revokeRetryMs: number }) {
  const revoke = (id: string) =>
    send(cluster.baseUrl, `/api/v1/api-tokens/${id}/revoke`, { method: 'POST', headers: jwt, timeoutMs: 8000 });
  return {
    revoke,
    async revokeUntilDone(id: string): Promise<Reply> {
      let last: Reply | undefined;
      await until('the revoke to go through', async () => (last = await revoke(id)).status !== 503, options.revokeRetryMs, 200);
      return last!;
    },
    retrieve: async (id: string) =>
      (await send(cluster.baseUrl, `/api/v1/api-tokens/${id}`, { headers: jwt })).json<{ revoked: boolean }>(),
    /** Every worker holds the token in its cache. */
    async warm(t: Test, headers: Record<string, string>) {
      const { replies, workers } = await dataRequests([cluster], 4 * options.workers + 4, headers);
      t.same(statusCounts(replies), { 200: 4 * options.workers + 4 }, 'the token works');
      t.equal(workers, options.workers, `on all ${options.workers} workers`);
    },
  };
}

/** A new token of every scope for all units, created through `baseUrl`'s API by the employee: its Authorization header. */
export async function bearerOfNewToken(baseUrl: string, employeeId: number, name: string): Promise<Record<string, string>> {
  const jwt = { authorization: `Bearer ${await mintEmployeeJwt({ secret: TEST_JWT_SECRET, userId: employeeId, ttlSeconds: 3600 })}` };
  const created = await send(baseUrl, '/api/v1/api-tokens', {
    method: 'POST',
    headers: jwt,
    body: { name, scopes: ALL_SCOPES, cooling_unit_ids: [], expires_at: null },
  });
  if (created.status !== 201) throw new Error(`token creation: ${created.status} ${created.body}`);
  return { authorization: `Bearer ${created.json<{ token: string }>().token}` };
}
