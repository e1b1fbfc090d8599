// What the bench/sensor-*.ts scripts share: a throwaway database on the local PostgreSQL
// (postgres storage profile; dropped at exit, also on Ctrl-C), a company with units, readings
// loaded through the real ingest, timing helpers, and the PASS/MISS report (a line per target
// and a final JSON line that bench/kit/sensor-targets.ts reads).
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { createPool } from '../src/db/pool.js';
import { lineRuns, parseReadings, ReadingValidator } from '../src/sensors/formats.js';
import { readingChunks } from '../src/sensors/generate.js';
import { ingestReadings } from '../src/sensors/ingest.js';
import { compactRollups, maintainStore } from '../src/sensors/store.js';

export const quick = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1';
export const adminUrl = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export const PROFILE_NOTE = 'storage profile: postgres (local PostgreSQL). The timescale profile is not benchmarked here: ' +
  'there is no TimescaleDB server on this machine, and PGlite (single-connection WASM) would not be representative.';

async function admin(sql: string) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export interface BenchDatabase {
  url: string;
  pool: pg.Pool;
  drop(): Promise<void>;
}

/** A migrated database of its own (postgres profile), dropped on exit or Ctrl-C. */
export async function createBenchDatabase(label: string, poolSize = 4): Promise<BenchDatabase> {
  const name = `coldtrack_bench_${label}_${randomBytes(4).toString('hex')}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  await admin(`CREATE DATABASE ${name}`);
  let pool: pg.Pool | null = null;
  let dropped = false;
  const drop = async () => {
    if (dropped) return;
    dropped = true;
    await pool?.end().catch(() => {});
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  };
  process.once('SIGINT', () => void drop().finally(() => process.exit(130)));
  process.env.SENSOR_STORAGE = 'postgres';
  await migrate(url.toString());
  pool = createPool(url.toString(), poolSize);
  return { url: url.toString(), pool, drop };
}

export interface BenchCompany {
  companyId: number;
  employeeId: number;
  unitIds: number[];
}

export async function createUnits(pool: pg.Pool, units: number): Promise<BenchCompany> {
  await pool.query(`
    INSERT INTO companies (id, name, country, currency) VALUES (1, 'Bench Co', 'NG', 'NGN');
    INSERT INTO locations (id, company_id, name) VALUES (1, 1, 'Site');
    INSERT INTO cooling_units (id, location_id, company_id, name, capacity_crates, capacity_kg)
      SELECT g, 1, 1, 'Room ' || g, 200, 5000 FROM generate_series(1, ${units}) g;
    INSERT INTO users (id, role, company_id, first_name) VALUES (1, 'REGISTERED_EMPLOYEE', 1, 'Bench');`);
  return { companyId: 1, employeeId: 1, unitIds: Array.from({ length: units }, (_, i) => i + 1) };
}

/** units x days of 15-minute readings ending at `end`, through the real ingest (COPY). */
export async function loadReadings(pool: pg.Pool, units: number, days: number, end: Date, seed = 1) {
  const started = performance.now();
  const stats = await ingestReadings(pool,
    parseReadings(lineRuns(Readable.from(readingChunks({ units, days, end, seed }))), 'csv', new ReadingValidator(() => end)),
    { batchSize: 100_000 });
  await pool.query('VACUUM ANALYZE');
  return { rows: stats.inserted, seconds: (performance.now() - started) / 1000 };
}

/**
 * The store's periodic upkeep as the app would have run it over the loaded period (for the
 * postgres profile: closed months of the rollups compacted), then VACUUM ANALYZE.
 */
export async function upkeepAfter(pool: pg.Pool, at: Date) {
  const started = performance.now();
  await maintainStore(pool, at);
  while ((await compactRollups(pool, at)) > 0);
  await pool.query('VACUUM ANALYZE');
  return (performance.now() - started) / 1000;
}

export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const started = performance.now();
  const result = await fn();
  return { ms: performance.now() - started, result };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export const fixed = (value: number, digits = 1) => value.toFixed(digits);

export interface TargetLine {
  /** the kit's name for it, when it has one (P4, P6) */
  key?: string;
  name: string;
  pass: boolean;
  measured: string;
  ratio?: number;
  detail: string;
}

/** One line per target (PASS/MISS), then the JSON line the bench kit parses. */
export function report(targets: TargetLine[]) {
  for (const target of targets) {
    console.log(`${target.pass ? 'PASS' : 'MISS'} ${target.key ? `${target.key} ` : ''}${target.name}: ${target.measured}`);
  }
  const json = Object.fromEntries(targets.map((target) => [target.key ?? target.name, {
    pass: target.pass, measured: target.measured, ratio: target.ratio, detail: target.detail,
  }]));
  console.log(JSON.stringify({ targets: json }));
}

export const BENCH_JWT_SECRET = 'bench-secret-bench-secret-bench-secret-000';

/** A clock the benchmark moves by hand: jumping it expires the history's caches between rounds. */
export class BenchClock {
  private offsetMs = 0;
  now() {
    return new Date(Date.now() + this.offsetMs);
  }
  jump(ms: number) {
    this.offsetMs += ms;
  }
}

/** The real app on the bench database (rate limits lifted), and a sensor_data token's headers. */
export async function startBenchApp(db: BenchDatabase, company: BenchCompany) {
  const { buildApp } = await import('../src/app.js');
  const { loadConfig } = await import('../src/config.js');
  const { mintEmployeeJwt } = await import('../src/auth/jwt.js');
  const clock = new BenchClock();
  const app = await buildApp({
    config: loadConfig({ DATABASE_URL: db.url, JWT_SECRET: BENCH_JWT_SECRET, LOG_LEVEL: 'warn' }),
    pool: db.pool,
    clock,
    rateLimitOverrides: { analytics_api_token: 1e9, authenticated_write: 1e9, public_read: 1e9 },
  });
  await app.ready();
  const jwt = await mintEmployeeJwt({ secret: BENCH_JWT_SECRET, userId: company.employeeId, now: clock.now() });
  const created = await app.inject({
    method: 'POST', url: '/api/v1/api-tokens',
    headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
    payload: { name: 'bench', scopes: ['sensor_data'], cooling_unit_ids: [], expires_at: null },
  });
  if (created.statusCode !== 201) throw new Error(`token: ${created.statusCode} ${created.body}`);
  const headers = { authorization: `Bearer ${(created.json() as { token: string }).token}` };
  return { app, clock, headers };
}
