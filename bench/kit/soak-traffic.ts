// The soak's traffic beside the dealt stream (soak-plan.ts): an employee's token life cycle every
// few seconds (create, retrieve, use, rotate with no grace, the old one refused, revoke, the new
// one refused: the revocation fan-out through Redis on every cycle), and an ingest every minute
// through the project's own CLI (a process that connects, loads the minute's readings of every
// sensor unit and leaves, as a site's uploader would). Each unexpected answer is a failure of the
// interval it happened in; a 5xx is also counted as one.
import { spawn } from 'node:child_process';
import type { Employee } from './credentials.js';
import { track } from './processes.js';
import { request } from './load.js';
import { repoRoot } from './checkout.js';

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
