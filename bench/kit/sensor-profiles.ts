// The two storage profiles the sensor benchmarks measure and the server of each: postgres on the
// local PostgreSQL (BENCH_ADMIN_URL), timescale on BENCH_TIMESCALE_URL or else the URL
// ../shared/timescaledb/start.sh prints (idempotent); nothing usable: NOT MEASURED, with the reason.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { timescaleUnsupported } from '../../src/sensors/policy-health.js';
import { adminUrl } from './throwaway-db.js';

export const SENSOR_PROFILES = ['postgres', 'timescale'] as const;
export type SensorProfile = (typeof SENSOR_PROFILES)[number];

export const isSensorProfile = (value: unknown): value is SensorProfile => SENSOR_PROFILES.includes(value as SensorProfile);

const startScript = fileURLToPath(new URL('../../../shared/timescaledb/start.sh', import.meta.url));

export type ProfileServer =
  { profile: SensorProfile; adminUrl: string; reason: null } | { profile: SensorProfile; adminUrl: null; reason: string };

/** The URL without a password, for reports. */
export function shownUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

function runStartScript(): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [startScript], { timeout: 170_000 }, (error, stdout, stderr) => {
      const url = stdout.trim().split('\n').at(-1)?.trim() ?? '';
      if (error)
        reject(new Error(`${startScript} failed: ${`${stdout}${stderr}`.trim().split('\n').slice(-2).join(' / ') || error.message}`));
      else if (!/^postgres(ql)?:\/\//.test(url)) reject(new Error(`${startScript} printed no URL (last line: "${url}")`));
      else resolve(url);
    });
  });
}

/** Why `url` cannot serve the timescale profile (not answering, no extension, not preloaded), or null. */
async function timescaleProblem(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    const problem = await timescaleUnsupported(client);
    return problem && `${shownUrl(url)} ${problem}`;
  } catch (error) {
    return `${shownUrl(url)} does not answer (${(error as Error).message})`;
  } finally {
    await client.end().catch(() => {});
  }
}

let timescale: Promise<ProfileServer> | null = null;

/** The TimescaleDB server's maintenance database, or why there is none; found once, then in BENCH_TIMESCALE_URL for child processes. */
function timescaleServer(): Promise<ProfileServer> {
  const none = (reason: string): ProfileServer => ({ profile: 'timescale', adminUrl: null, reason });
  timescale ??= (async () => {
    let url = process.env.BENCH_TIMESCALE_URL?.trim();
    const how = url ? 'BENCH_TIMESCALE_URL' : startScript;
    if (!url) {
      if (!existsSync(startScript)) return none(`no TimescaleDB server: BENCH_TIMESCALE_URL is unset and there is no ${startScript}`);
      try {
        url = await runStartScript();
      } catch (error) {
        return none(`no TimescaleDB server: ${(error as Error).message}`);
      }
    }
    const admin = new URL(url);
    if (admin.pathname === '' || admin.pathname === '/') admin.pathname = '/postgres';
    const problem = await timescaleProblem(admin.toString());
    if (problem) return none(`no usable TimescaleDB server (from ${how}): ${problem}`);
    process.env.BENCH_TIMESCALE_URL = admin.toString();
    return { profile: 'timescale', adminUrl: admin.toString(), reason: null };
  })();
  return timescale;
}

/** The server a profile's throwaway databases go on. */
export async function profileServer(profile: SensorProfile): Promise<ProfileServer> {
  if (profile === 'timescale') return timescaleServer();
  return { profile, adminUrl: adminUrl(), reason: null };
}
