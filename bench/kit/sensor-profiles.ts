// The two storage profiles the sensor benchmarks measure and the server of each: postgres on the
// local PostgreSQL (BENCH_ADMIN_URL), timescale on BENCH_TIMESCALE_URL or else the URL
// ../shared/timescaledb/start.sh prints (idempotent); nothing usable: NOT MEASURED, with the reason.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { timescaleUnsupported } from '../../src/sensors/policy-health.js';
import { adminUrl } from './throwaway-db.js';

export const SENSOR_PROFILES = ['postgres', 'timescale'] as const;
export type SensorProfile = (typeof SENSOR_PROFILES)[number];

export const isSensorProfile = (value: unknown): value is SensorProfile => SENSOR_PROFILES.includes(value as SensorProfile);

export type ProfileServer = { adminUrl: string; reason: null } | { adminUrl: null; reason: string };

/** The URL without a password, for reports. */
export function shownUrl(url: string | URL): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

const startScript = fileURLToPath(new URL('../../../shared/timescaledb/start.sh', import.meta.url));

/** BENCH_TIMESCALE_URL, else the last line start.sh prints. */
async function timescaleUrl(): Promise<string> {
  const given = process.env.BENCH_TIMESCALE_URL?.trim();
  if (given) return given;
  if (!existsSync(startScript)) throw new Error(`BENCH_TIMESCALE_URL is unset and there is no ${startScript}`);
  const { stdout } = await promisify(execFile)('bash', [startScript], { timeout: 170_000 }).catch((error: Error & { stderr?: string }) => {
    throw new Error(`${startScript} failed: ${error.stderr?.trim().split('\n').slice(-2).join(' / ') || error.message}`);
  });
  const url = stdout.trim().split('\n').at(-1)?.trim() ?? '';
  if (!/^postgres(ql)?:\/\//.test(url)) throw new Error(`${startScript} printed no URL (last line: "${url}")`);
  return url;
}

let timescale: Promise<ProfileServer> | undefined;

/** Found once, then left in BENCH_TIMESCALE_URL for the child processes. */
function timescaleServer(): Promise<ProfileServer> {
  timescale ??= (async () => {
    let admin: URL;
    try {
      admin = new URL(await timescaleUrl());
    } catch (error) {
      return { adminUrl: null, reason: `no TimescaleDB server: ${(error as Error).message}` };
    }
    if (admin.pathname === '' || admin.pathname === '/') admin.pathname = '/postgres';
    const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5000 });
    let problem: string | null;
    try {
      await client.connect();
      problem = await timescaleUnsupported(client);
    } catch (error) {
      problem = `does not answer (${(error as Error).message})`;
    } finally {
      await client.end().catch(() => {});
    }
    if (problem) return { adminUrl: null, reason: `no usable TimescaleDB server: ${shownUrl(admin)} ${problem}` };
    process.env.BENCH_TIMESCALE_URL = admin.toString();
    return { adminUrl: admin.toString(), reason: null };
  })();
  return timescale;
}

/** The server a profile's throwaway databases go on, or why there is none. */
export async function profileServer(profile: SensorProfile): Promise<ProfileServer> {
  return profile === 'timescale' ? timescaleServer() : { adminUrl: adminUrl(), reason: null };
}
