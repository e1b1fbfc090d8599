// The HTTP the kit sends: autocannon in long-lived child processes (one per priority, off the
// orchestrator's event loop; jobs as JSON lines on stdin), at nice 10 for the event-loop scenarios so
// it does not outbid the loops measured; and `request`, one at a time.
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { LATENCY_US, type LatencyMs, latencyOf } from './histograms.js';
import { track } from './processes.js';

export type { LatencyMs };

export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface LoadOptions {
  url: string;
  connections: number;
  /** seconds; or `amount` requests */
  duration?: number;
  amount?: number;
  /** requests per second over all connections (a steady stream instead of a flood) */
  overallRate?: number;
  requests: RequestSpec[];
  /**
   * true: the list is dealt out from one counter shared by every connection, so each entry gets its
   * share (autocannon's default walks it per connection from the first entry). false: each
   * connection walks the whole list (a warm-up that reaches every worker with every token).
   */
  spread?: boolean;
  /** spread only: the entry the deal starts at */
  firstEntry?: number;
}

export interface LoadFigures {
  durationS: number;
  /** its 2xx and 304 answers' latencies (histograms.ts): runs merge these, percentiles do not average */
  latencyHistogram: string;
  responses: number;
  /** every response (any status) per second */
  reqPerS: number;
  /** 2xx responses per second: what the targets compare */
  okPerS: number;
  /** the busiest one-second sample (any status): what a pilot sizes the next run for */
  peakPerS: number;
  latencyMs: LatencyMs;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  mbPerS: number;
}

// the part of autocannon's result read here (it ships no type declarations)
interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  statusCodeStats: Record<string, { count: number }>;
  requests: { total: number; max: number };
  throughput: { average: number };
  /** added by GENERATOR_SCRIPT: every run has one */
  latencyHistogram: string;
}

const resolve = createRequire(import.meta.url).resolve;
// autocannon's histogram keeps whole milliseconds, a step of 10-15 % on a small page: each 2xx (and
// 304, P16's) answer is recorded again in microseconds (LATENCY_US)
const GENERATOR_SCRIPT = `const autocannon = require(${JSON.stringify(resolve('autocannon'))});
const hdr = require(${JSON.stringify(resolve('hdr-histogram-js'))});
require('node:readline').createInterface({ input: process.stdin })
  .on('line', (line) => {
    const { id, options: { spread, firstEntry, latencyUs, ...options } } = JSON.parse(line);
    let next = firstEntry ?? 0;
    if (spread) {
      const list = options.requests;
      options.requests = [{
        setupRequest: (request) => {
          const entry = list[next++ % list.length];
          return { ...request, method: entry.method, path: entry.path, headers: entry.headers, body: entry.body ?? '' };
        },
      }];
    }
    const latencies = hdr.build(latencyUs);
    const instance = autocannon({ timeout: 30, ...options });
    instance.on('response', (client, status, bytes, ms) => {
      if ((status >= 200 && status < 300) || status === 304) latencies.recordValue(Math.max(1, Math.round(ms * 1000)));
    });
    instance.then(
      (result) => {
        const latencyHistogram = hdr.encodeIntoCompressedBase64(latencies);
        process.stdout.write(JSON.stringify({ id, result: { ...result, latencyHistogram }, dealt: next - (firstEntry ?? 0) }) + '\\n');
      },
      (error) => process.stdout.write(JSON.stringify({ id, error: String(error) }) + '\\n'));
  })
  .on('close', () => process.exit(0));`;

/** autocannon's result, and how many entries of a spread list it dealt (sent, or made ready: one a connection) */
interface GeneratorAnswer {
  result: AutocannonResult;
  dealt: number;
}

interface Pending {
  resolve: (answer: GeneratorAnswer) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

class Generator {
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private stderr = '';

  constructor(nice: boolean) {
    const [command, args] = nice
      ? ['nice', ['-n', '10', process.execPath, '-e', GENERATOR_SCRIPT]]
      : [process.execPath, ['-e', GENERATOR_SCRIPT]];
    this.child = spawn(command as string, args as string[], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    track(this.child);
    this.child.stderr!.on('data', (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString('utf8')).slice(-2000)));
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      const { id, result, dealt, error } = JSON.parse(line) as { id: number; result?: AutocannonResult; dealt?: number; error?: string };
      const job = this.pending.get(id);
      if (!job) return;
      this.pending.delete(id);
      clearTimeout(job.timer);
      if (error !== undefined || !result) job.reject(new Error(`autocannon: ${error}`));
      else job.resolve({ result, dealt: dealt ?? 0 });
    });
    this.child.on('exit', (code, signal) => {
      for (const job of this.pending.values()) {
        clearTimeout(job.timer);
        job.reject(new Error(`the load generator exited (${signal ?? code}): ${this.stderr.trim().slice(-300)}`));
      }
      this.pending.clear();
    });
  }

  get alive() {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  run(options: LoadOptions): Promise<GeneratorAnswer> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      // bounded: a run never outlives its duration by much (autocannon's own timeout is 30 s a request)
      const limitMs = ((options.duration ?? 60) + 60) * 1000;
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`autocannon did not finish within ${limitMs / 1000} s`));
        this.child.kill('SIGKILL');
      }, limitMs);
      this.pending.set(id, { resolve, reject, timer });
      this.child.stdin!.write(JSON.stringify({ id, options: { ...options, latencyUs: LATENCY_US } }) + '\n');
    });
  }

  close() {
    this.child.stdin!.end();
  }
}

const generators = new Map<boolean, Generator>();

function generatorFor(nice: boolean): Generator {
  let generator = generators.get(nice);
  if (!generator?.alive) {
    generator = new Generator(nice);
    generators.set(nice, generator);
  }
  return generator;
}

export async function runLoad(options: LoadOptions, { nice = false } = {}): Promise<LoadFigures> {
  return figuresOf((await generatorFor(nice).run(options)).result);
}

/** A spread run, and how many entries it dealt from `firstEntry` (a caller continuing from there never repeats one). */
export async function runDealtLoad(options: LoadOptions): Promise<{ figures: LoadFigures; dealt: number }> {
  const { result, dealt } = await generatorFor(false).run({ ...options, spread: true });
  return { figures: figuresOf(result), dealt };
}

/** Ends the generator processes (they exit when their stdin closes). */
export function closeLoadGenerators() {
  for (const generator of generators.values()) generator.close();
  generators.clear();
}

function figuresOf(result: AutocannonResult): LoadFigures {
  const durationS = Math.max(result.duration, 0.001);
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count]));
  return {
    durationS,
    latencyHistogram: result.latencyHistogram,
    responses: result.requests.total,
    reqPerS: result.requests.total / durationS,
    okPerS: result['2xx'] / durationS,
    peakPerS: Math.max(result.requests.max ?? 0, result.requests.total / durationS),
    latencyMs: latencyOf([result.latencyHistogram])!,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes,
    mbPerS: result.throughput.average / 1e6,
  };
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
