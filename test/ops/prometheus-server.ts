// A real Prometheus for the tests (Debian's prometheus package): its own port, its own TSDB in a
// temporary directory, scraping a target every second as job "coldtrack" (set once it is known,
// through a reload, so Prometheus starts beside the service) and evaluating
// ops/prometheus/*.yml every second. The rules are loaded from a copy that runs in seconds what
// production runs in minutes: every `for:` becomes FOR_IN_TEST, and the 1- and 5-minute ranges
// become 10 and 30 seconds (at a 1 s scrape that is still 10 and 30 samples). Nothing else of the
// rules changes. Killed in teardown, and by the reaper if the test process dies first.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { freePort } from '../../src/free-port.js';
import { reapOnExit } from '../helpers/reaper.js';
import { until } from '../operations/harness.js';
import { RULE_FILES } from './promql.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export const FOR_IN_TEST = '3s';

/** The test's copy of a rule file: shorter `for:` and ranges (see the header). */
export function rulesForTest(text: string): string {
  return text
    .replace(/^(\s+for:\s*)\S+/gm, `$1${FOR_IN_TEST}`)
    .replace(/\[1m\]/g, '[10s]')
    .replace(/\[5m\]/g, '[30s]');
}

export interface AlertState {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
  activeAt: string;
  value: string;
}

export interface Prometheus {
  url: string;
  /** GET /api/v1/<path>: the `data` of a success, or throws with Prometheus's error. */
  api<T = unknown>(path: string, params?: Record<string, string>): Promise<T>;
  /** The answer to an instant query as Prometheus gives it: status, and data or error. */
  query(expr: string): Promise<{ status: string; data?: { resultType: string; result: unknown[] }; error?: string; errorType?: string }>;
  alerts(): Promise<AlertState[]>;
  /** Scrape `target` (host:port) from now on (the configuration rewritten and reloaded). */
  scrape(target: string): Promise<void>;
  output(): string;
}

/** Starts Prometheus with the rules loaded and nothing to scrape yet (see scrape()). */
export async function startPrometheus(t: Teardown): Promise<Prometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'coldtrack-prometheus-'));
  const ruleFiles = RULE_FILES.map((file) => {
    const copy = join(dir, basename(file));
    writeFileSync(copy, rulesForTest(readFileSync(file, 'utf8')));
    return copy;
  });
  const configure = (targets: string[]) =>
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  scrape_timeout: 1s',
        '  evaluation_interval: 1s',
        'rule_files:',
        ...ruleFiles.map((file) => `  - ${file}`),
        'scrape_configs:',
        '  - job_name: coldtrack',
        '    static_configs:',
        `      - targets: [${targets.map((target) => `'${target}'`).join(', ')}]`,
      ].join('\n') + '\n',
    );
  configure([]);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = reapOnExit(
    spawn(
      'prometheus',
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--web.enable-lifecycle',
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    ),
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });
  child.once('error', (error) => (output += `\nspawn failed: ${error.message} (apt-get install prometheus; .ci/run does)`));

  await until(
    'Prometheus ready',
    async () => {
      if (child.exitCode !== null || /spawn failed/.test(output)) throw new Error(`prometheus exited:\n${output}`);
      return (await fetch(`${url}/-/ready`).catch(() => null))?.ok === true;
    },
    30_000,
    100,
  );

  async function get(path: string, params: Record<string, string> = {}) {
    const response = await fetch(`${url}/api/v1/${path}?${new URLSearchParams(params)}`, { signal: AbortSignal.timeout(10_000) });
    return (await response.json()) as { status: string; data?: unknown; error?: string; errorType?: string };
  }

  async function api<T>(path: string, params: Record<string, string> = {}) {
    const body = await get(path, params);
    if (body.status !== 'success') throw new Error(`Prometheus ${path}: ${body.errorType}: ${body.error}`);
    return body.data as T;
  }
  return {
    url,
    api,
    query: (expr) => get('query', { query: expr }) as ReturnType<Prometheus['query']>,
    alerts: async () => (await api<{ alerts: AlertState[] }>('alerts')).alerts,
    async scrape(target) {
      configure([target]);
      const reloaded = await fetch(`${url}/-/reload`, { method: 'POST', signal: AbortSignal.timeout(10_000) });
      if (!reloaded.ok)
        throw new Error(`Prometheus did not reload its configuration: ${reloaded.status} ${await reloaded.text()}\n${output}`);
    },
    output: () => output,
  };
}
