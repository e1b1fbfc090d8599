// The two storage profiles the sensor benchmarks (bench/sensor-*.ts) measure, and the server each
// runs on: postgres on the local PostgreSQL (BENCH_ADMIN_URL), timescale on a real TimescaleDB:
// BENCH_TIMESCALE_URL, or else, when this machine has it, ../shared/timescaledb/start.sh (it is
// idempotent: starts the private cluster if needed and prints its URL). Nothing reachable: the
// timescale profile is NOT MEASURED, with the reason.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { timescaleUnsupported } from '../../src/sensors/policy-health.js';
import { adminUrl } from './throwaway-db.js';

export const SENSOR_PROFILES = ['postgres', 'timescale'] as const;
export type SensorProfile = (typeof SENSOR_PROFILES)[number];

export const isSensorProfile = (value: unknown): value is SensorProfile => SENSOR_PROFILES.includes(value as SensorProfile);

/** The machine's TimescaleDB script (../shared/timescaledb/README.md), beside the checkout. */
export const timescaleStartScript = fileURLToPath(new URL('../../../shared/timescaledb/start.sh', import.meta.url));

export type ProfileServer =
  { profile: SensorProfile; adminUrl: string; reason: null } | { profile: SensorProfile; adminUrl: null; reason: string };

/** A server URL with the maintenance database (postgres) as its path when it names none. */
function maintenanceUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.pathname === '' || parsed.pathname === '/') parsed.pathname = '/postgres';
  return parsed.toString();
}

/** The URL without a password, for reports. */
export function shownUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

function runStartScript(): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [timescaleStartScript], { timeout: 170_000 }, (error, stdout, stderr) => {
      if (error) {
        const said = `${stdout}${stderr}`.trim().split('\n').slice(-2).join(' / ');
        reject(new Error(`${timescaleStartScript} failed: ${said || error.message}`));
        return;
      }
      const url = stdout.trim().split('\n').at(-1)?.trim() ?? '';
      if (!/^postgres(ql)?:\/\//.test(url)) reject(new Error(`${timescaleStartScript} printed no URL (last line: "${url}")`));
      else resolve(url);
    });
  });
}

/** Why `url` cannot serve the timescale profile (not answering, no extension, not preloaded), or null. */
async function timescaleProblem(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (error) {
    return `${shownUrl(url)} does not answer (${(error as Error).message})`;
  }
  try {
    const problem = await timescaleUnsupported(client);
    return problem && `${shownUrl(url)} ${problem}`;
  } finally {
    await client.end().catch(() => {});
  }
}

let timescale: Promise<ProfileServer> | null = null;

/**
 * The TimescaleDB server (maintenance database URL) or why there is none. Sets BENCH_TIMESCALE_URL
 * once found, so child processes (bench/sensor-*.ts) reuse it without running the script again.
 */
export function timescaleServer(): Promise<ProfileServer> {
  timescale ??= (async (): Promise<ProfileServer> => {
    let url = process.env.BENCH_TIMESCALE_URL?.trim();
    let how = 'BENCH_TIMESCALE_URL';
    if (!url) {
      if (!existsSync(timescaleStartScript)) {
        return {
          profile: 'timescale',
          adminUrl: null,
          reason: `no TimescaleDB server: BENCH_TIMESCALE_URL is unset and there is no ${timescaleStartScript}`,
        };
      }
      try {
        url = await runStartScript();
      } catch (error) {
        return { profile: 'timescale', adminUrl: null, reason: `no TimescaleDB server: ${(error as Error).message}` };
      }
      how = timescaleStartScript;
    }
    const admin = maintenanceUrl(url);
    const problem = await timescaleProblem(admin);
    if (problem) return { profile: 'timescale', adminUrl: null, reason: `no usable TimescaleDB server (from ${how}): ${problem}` };
    process.env.BENCH_TIMESCALE_URL = admin;
    return { profile: 'timescale', adminUrl: admin, reason: null };
  })();
  return timescale;
}

/** The server a profile's throwaway databases go on. */
export async function profileServer(profile: SensorProfile): Promise<ProfileServer> {
  if (profile === 'timescale') return timescaleServer();
  return { profile, adminUrl: adminUrl(), reason: null };
}
