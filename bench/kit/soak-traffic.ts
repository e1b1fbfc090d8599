// What the P14 soak sends (bench/soak.ts). The dealt stream: the mixed scenario's partner requests
// (kit/scenarios.ts, `mixedPath`) with API tokens of every company, plus the employee reads (me,
// cooling-units, the token list) with employee JWTs, dealt in order at a steady rate, sized so no token or
// employee comes near its per-minute limit: the soak measures the service, not the limiter. Beside
// it, the stateful traffic: an employee's token life cycle every few seconds (create, retrieve,
// use, rotate with no grace, the old one refused, revoke, the new one refused: the revocation
// fan-out through Redis on every cycle), and an ingest every minute through the project's own CLI
// (a process that connects, loads the minute's readings of every sensor unit and leaves, as a
// site's uploader would). Each unexpected answer is a failure of the interval it happened in; a
// 5xx is also counted as one.
import { spawn } from 'node:child_process';
import { repoRoot } from './checkout.js';
import { type Layout, TOKEN_LIMIT_PER_MINUTE } from './config.js';
import type { BenchToken, Employee } from './credentials.js';
import { request, type RequestSpec } from './load.js';
import { track } from './processes.js';
import { mixedPath } from './scenarios.js';

export interface SoakOptions {
  /** minutes of load after the warm-up; fractions allowed (the tests run a fraction of one) */
  minutes: number;
  /** requests a second of the mixed scenario, over all its connections */
  rate: number;
  profile: 'postgres' | 'timescale';
}

export const SOAK_DEFAULTS = { minutes: 30, rate: 20 } as const;
/** seconds between samples: every sample closes one interval of load */
export const SAMPLE_SECONDS = 10;
/** connections the load generator keeps open */
export const SOAK_CONNECTIONS = 8;
/** a token's share of the stream a minute: half its limit, so a slow interval's catch-up never draws a 429 */
const TOKEN_SHARE_PER_MINUTE = TOKEN_LIMIT_PER_MINUTE / 2;
/** employee reads per minute each (limit 600): the employee share of the stream is one request in ten */
const EMPLOYEE_SHARE_PER_MINUTE = 150;
/** entries of the dealt list: every endpoint appears many times, each token several times */
const ENTRIES = 400;

export const soakCredentialNeeds = (rate: number) => ({
  tokens: Math.max(8, Math.ceil((rate * 60 * 0.9) / TOKEN_SHARE_PER_MINUTE)),
  /** readers for the list, plus one manager for the create/rotate/revoke cycle */
  employees: Math.max(2, Math.ceil((rate * 60 * 0.1) / EMPLOYEE_SHARE_PER_MINUTE)) + 1,
});

const EMPLOYEE_PATHS = ['/api/v1/me', '/api/v1/cooling-units?page_size=50', '/api/v1/api-tokens?page_size=20'];

/**
 * The dealt list: nine mixed-scenario requests with API tokens, then one employee read, repeated. Entry i's
 * token is tokens[i mod T], so at `rate` every token gets about rate x 60 x 0.9 / T a minute.
 */
export function soakRequests(tokens: BenchToken[], readers: Employee[], layout: Layout): RequestSpec[] {
  let dataEntry = 0;
  let employeeEntry = 0;
  return Array.from({ length: ENTRIES }, (_, i): RequestSpec => {
    if (i % 10 === 9) {
      const reader = readers[employeeEntry % readers.length]!;
      const path = EMPLOYEE_PATHS[employeeEntry++ % EMPLOYEE_PATHS.length]!;
      return { method: 'GET', path, headers: { authorization: `Bearer ${reader.jwt}` } };
    }
    const token = tokens[dataEntry % tokens.length]!;
    const path = mixedPath(token, dataEntry++, layout, true);
    return { method: 'GET', path, headers: { authorization: `Bearer ${token.raw}` } };
  });
}

/** The window the verdict compares (the first and the last), scaled to the soak: 5 minutes of 30. */
export const verdictWindowMinutes = (minutes: number) => Math.max((minutes * 5) / 30, SAMPLE_SECONDS / 60);

// The stateful traffic beside the dealt stream.

export interface TrafficTally {
  calls: number;
  status5xx: number;
  failures: string[];
}

export const newTally = (): TrafficTally => ({ calls: 0, status5xx: 0, failures: [] });

const USE_PATH = '/api/v1/analytics/utilization?start_date=2025-06-01&end_date=2025-06-07&page_size=10';

/** One create/retrieve/use/rotate/revoke cycle of `manager`; every answer checked against what it must be. */
export async function tokenLifeCycle(serviceUrl: string, manager: Employee, cycle: number, tally: TrafficTally): Promise<void> {
  const employee = { authorization: `Bearer ${manager.jwt}` };
  const call = async (what: string, expected: number, path: string, options: { method?: string; body?: unknown; token?: string } = {}) => {
    const headers: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : { ...employee };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    tally.calls++;
    const answer = await request(serviceUrl + path, {
      method: options.method ?? 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      timeoutMs: 15_000,
    }).catch((error: Error) => ({ status: 0, body: error.message }));
    if (answer.status >= 500) tally.status5xx++;
    if (answer.status !== expected) {
      tally.failures.push(`${what}: ${answer.status} instead of ${expected} (${answer.body.slice(0, 120)})`);
      return null;
    }
    return answer.body === '' ? {} : (JSON.parse(answer.body) as { id?: string; token?: string });
  };
  const created = await call('create', 201, '/api/v1/api-tokens', {
    method: 'POST',
    body: { name: `soak ${cycle}`, scopes: ['utilization'] },
  });
  if (!created?.id || !created.token) return;
  await call('list', 200, '/api/v1/api-tokens?page_size=5');
  await call('retrieve', 200, `/api/v1/api-tokens/${created.id}`);
  await call('use', 200, USE_PATH, { token: created.token });
  const rotated = await call('rotate', 201, `/api/v1/api-tokens/${created.id}/rotate`, {
    method: 'POST',
    body: { grace_period_seconds: 0 },
  });
  if (!rotated?.id || !rotated.token) return;
  await call('old token after rotation', 401, USE_PATH, { token: created.token });
  await call('use rotated', 200, USE_PATH, { token: rotated.token });
  await call('revoke', 200, `/api/v1/api-tokens/${rotated.id}/revoke`, { method: 'POST' });
  await call('revoked token', 401, USE_PATH, { token: rotated.token });
}

/** The minute's readings (one of each kind per sensor unit, stamped now) through `node dist/src/cli/ingest.js -`. */
export function ingestMinute(databaseUrl: string, unitIds: number[], at: Date, tally: TrafficTally): Promise<void> {
  const stamp = new Date(Math.floor(at.getTime() / 60_000) * 60_000).toISOString();
  const csv = [
    'cooling_unit_id,specification_type,recorded_at,value',
    ...unitIds.flatMap((unit) => [`${unit},TEMPERATURE,${stamp},${(4 + (unit % 3) / 2).toFixed(1)}`, `${unit},HUMIDITY,${stamp},88.5`]),
  ].join('\n');
  tally.calls++;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['dist/src/cli/ingest.js', '-', '--format', 'csv'], {
      env: { ...process.env, DATABASE_URL: databaseUrl },
      cwd: repoRoot,
      stdio: ['pipe', 'ignore', 'pipe'],
      detached: true,
    });
    track(child);
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-1000)));
    child.on('error', (error) => {
      tally.failures.push(`ingest: ${error.message}`);
      resolve();
    });
    child.on('exit', (code, signal) => {
      if (code !== 0) tally.failures.push(`ingest exited ${signal ?? code}: ${stderr.trim().split('\n').at(-1) ?? ''}`);
      resolve();
    });
    child.stdin!.end(`${csv}\n`);
  });
}
