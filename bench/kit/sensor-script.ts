// What the bench/sensor-*.ts scripts share: the command line, a database of one storage profile,
// readings through the real ingest and the store's upkeep, the app on it, alternating rounds, and
// the verdict lines, the last one JSON for kit/sensor-targets.ts.
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { createPool } from '../../src/db/pool.js';
import { lineRuns, parseReadings, ReadingValidator } from '../../src/sensors/formats.js';
import { readingChunks, readingCount } from '../../src/sensors/generate.js';
import { ingestReadings } from '../../src/sensors/ingest.js';
import { pauseSensorPolicies } from '../../src/sensors/policy-health.js';
import { compactAggregates, maintainStore } from '../../src/sensors/store.js';
import { saveScriptResult } from './checkout.js';
import { BENCH_JWT_SECRET } from './config.js';
import { isSensorProfile, profileServer, type SensorProfile } from './sensor-profiles.js';
import { fixed, median, timed } from './statistics.js';
import { createThrowawayDatabase } from './throwaway-db.js';

/** Every sensor script's command line (another script's own options pass through). */
export const args = parseArgs({
  options: { profile: { type: 'string', default: 'postgres' }, quick: { type: 'boolean', default: false }, readings: { type: 'string' } },
  strict: false,
}).values as { profile: string; quick: boolean; readings?: string };

export const quick = args.quick;
export const profile = args.profile as SensorProfile;
if (!isSensorProfile(profile)) {
  console.error(`--profile must be postgres or timescale, not "${profile}"`);
  process.exit(2);
}

/** Where every sensor script's readings end: the bench's year, 2025, whole. */
export const END = new Date('2026-01-01T00:00:00Z');

export interface BenchDatabase {
  url: string;
  pool: pg.Pool;
  profile: SensorProfile;
  /** one line for the report: profile, server and versions */
  note: string;
  /** `step` runs on drop(), before the pool ends, last added first (an app's close) */
  atDrop(step: () => unknown): void;
  drop(): Promise<void>;
}

/** A target as a script judges it; no `pass`: NOT MEASURED, the reason in `detail`. */
export interface Verdict {
  key: string;
  name: string;
  pass?: boolean;
  measured?: string;
  ratio?: number;
  detail: string;
}

type Target = Pick<Verdict, 'key' | 'name'>;

/** A sensor script's whole life: its bench database, `body`'s verdicts reported, the database dropped however `body` ends. */
export async function run(
  script: { label: string; poolSize?: number; targets: Target[] },
  body: (db: BenchDatabase) => Promise<Verdict[]>,
) {
  const db = await createBenchDatabase(script.label, script.poolSize ?? 4, script.targets);
  console.log(`${db.note}${quick ? '; quick run' : ''}`);
  try {
    report(await body(db));
  } finally {
    await db.drop();
  }
}

/**
 * A migrated database of the run's profile; no server for it: every target NOT MEASURED, exit 0.
 * timescale: the policies are paused, so they run only where upkeepAfter() runs them. Dropped at
 * exit whatever happens (throwaway-db.ts).
 */
export async function createBenchDatabase(label: string, poolSize: number, targets: Target[]): Promise<BenchDatabase> {
  const server = await profileServer(profile);
  if (server.adminUrl === null) notMeasured(targets, server.reason);
  const database = await createThrowawayDatabase({
    label: `${label}_${profile === 'timescale' ? 'ts' : 'pg'}`,
    migrate: { sensorStorage: profile, sensorRetentionDays: null },
    adminUrl: server.adminUrl,
  });
  const pool = createPool(database.url, poolSize);
  const { rows } = await pool.query<{ versions: string }>(`
    SELECT coalesce('TimescaleDB ' || (SELECT extversion FROM pg_extension WHERE extname = 'timescaledb') || ' on ', '')
           || split_part(version(), ' on ', 1) AS versions`);
  let note = `storage profile: ${profile} (${rows[0]!.versions} at postgres://${new URL(server.adminUrl).host})`;
  if (profile === 'timescale') {
    await pauseSensorPolicies(pool);
    note += '; sensor policies paused, run by the benchmark where a year in service would have run them';
  }
  const steps: (() => unknown)[] = [];
  return {
    url: database.url,
    pool,
    profile,
    note,
    atDrop: (step) => steps.push(step),
    // the pool after the steps, so its clients end cleanly rather than being cut by the forced drop
    drop: async () => {
      for (const step of steps.splice(0).reverse()) await Promise.resolve(step()).catch((error: unknown) => console.error(error));
      await pool.end().catch(() => {});
      await database.drop();
    },
  };
}

/** One line per target, and the JSON line kit/sensor-targets.ts reads (printed last by the caller). */
function verdictLines(verdicts: Verdict[]) {
  for (const { key, name, pass, measured, detail } of verdicts) {
    console.log(`${pass === undefined ? 'NOT MEASURED' : pass ? 'PASS' : 'MISS'} ${key} ${name}: ${measured ?? detail}`);
  }
  const targets = Object.fromEntries(
    verdicts.map(({ key, pass, measured = '', ratio, detail }) => [key, { pass, measured, ratio, detail }]),
  );
  return { profile, targets };
}

/** Every target NOT MEASURED with the reason; exits 0. */
export function notMeasured(targets: Target[], reason: string): never {
  console.log(JSON.stringify(verdictLines(targets.map((target) => ({ ...target, detail: `${reason} (storage profile ${profile})` })))));
  process.exit(0);
}

/** The verdict lines, the figures appended to results/scripts.jsonl (kit/checkout.ts), the JSON line last. */
export function report(verdicts: Verdict[]) {
  const line = verdictLines(verdicts);
  console.log(`figures: ${saveScriptResult(line)}`);
  console.log(JSON.stringify(line));
}

/** `rounds` rounds of every kind, the order rotated (`mirror`: reversed) each round, so a drift hits every kind alike. */
export async function alternate<K extends string, R>(
  rounds: number,
  kinds: readonly K[],
  measure: (kind: K, round: number) => Promise<R>,
  mirror = false,
): Promise<Record<K, R[]>> {
  const results = Object.fromEntries(kinds.map((kind) => [kind, [] as R[]])) as Record<K, R[]>;
  for (let round = 0; round < rounds; round++) {
    const order = mirror ? (round % 2 ? [...kinds].reverse() : kinds) : kinds.map((_, i) => kinds[(i + round) % kinds.length]!);
    for (const kind of order) results[kind].push(await measure(kind, round));
  }
  return results;
}

export const msOf = async (fn: () => Promise<unknown>) => (await timed(fn)).ms;

export const medians = <K extends string>(lists: Record<K, number[]>) =>
  Object.fromEntries(Object.entries<number[]>(lists).map(([key, values]) => [key, median(values)])) as Record<K, number>;

/** A COPY ... TO STDOUT's output through `stages` (a compressor) into nowhere: bytes COPY sent, bytes out of the last stage. */
export async function copyOut(client: pg.ClientBase, statement: string, ...stages: NodeJS.ReadWriteStream[]) {
  const counted = { sent: 0, out: 0 };
  const source = client.query(copyTo(statement));
  source.on('data', (chunk: Buffer) => (counted.sent += chunk.length));
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      counted.out += chunk.length;
      done();
    },
  });
  await pipeline([source, ...stages, sink]);
  return counted;
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

/** CSV text parsed and validated (readings up to `end`) in runs, as `npm run ingest` reads a file. */
export function csvReadingRuns(csv: Iterable<string>, end: Date) {
  return parseReadings(lineRuns(Readable.from(csv)), 'csv', new ReadingValidator(() => end));
}

/** units x days of generated 15-minute readings ending at END, as CSV text in memory, and how many. */
export function generatedCsv(units: number, days: number, seed: number) {
  const options = { units, days, end: END, seed };
  return { csv: [...readingChunks(options)], readings: readingCount(options) };
}

/** The CSV through the real ingest in batches of 50,000, checked to have loaded `expected` readings. */
export async function ingestCsv(pool: pg.Pool, csv: string[], expected: number) {
  const { inserted } = await ingestReadings(pool, csvReadingRuns(csv, END), { batchSize: 50_000 });
  if (inserted !== expected) throw new Error(`ingest loaded ${inserted} of ${expected}`);
}

/** units x days of 15-minute readings ending at `end`, through the real ingest (COPY), then VACUUM ANALYZE. */
export async function loadReadings(pool: pg.Pool, units: number, days: number, end: Date) {
  const started = performance.now();
  const stats = await ingestReadings(pool, csvReadingRuns(readingChunks({ units, days, end, seed: 1 }), end), { batchSize: 100_000 });
  // without the pool's statement deadline: millions of rows take longer on a busy machine
  const client = await pool.connect();
  try {
    await client.query('SET statement_timeout = 0');
    await client.query({ text: 'VACUUM ANALYZE', query_timeout: 600_000 } as pg.QueryConfig);
    await client.query('RESET statement_timeout');
  } finally {
    client.release();
  }
  return { rows: stats.inserted, seconds: (performance.now() - started) / 1000 };
}

/**
 * A company of `units` units with `days` of readings to END through the real ingest, and the
 * upkeep as a year in service leaves them (every policy's offset passed), said on stdout.
 */
export async function companyStore(db: BenchDatabase, units: number, days: number) {
  const company = await createUnits(db.pool, units);
  const loaded = await loadReadings(db.pool, units, days, END);
  console.log(`loaded ${loaded.rows} readings (${units} units x ${days} days) through the ingest in ${fixed(loaded.seconds)} s`);
  const upkeep = await upkeepAfter(db, new Date(END.getTime() + 4 * 86_400_000));
  const layout = db.profile === 'timescale' ? `; ${await aggregateLayout(db.pool)}` : '';
  console.log(`upkeep over the loaded year (${upkeep.steps.join(', ')}; VACUUM ANALYZE): ${fixed(upkeep.seconds)} s${layout}`);
  return { company, readings: loaded.rows };
}

/** companyStore() and the app on it (closed on the database's drop). */
export async function storeWithApp(db: BenchDatabase, units: number, days: number) {
  const { company } = await companyStore(db, units, days);
  const bench = await startBenchApp(db, company);
  db.atDrop(() => bench.app.close());
  return { company, ...bench };
}

/** The timescale profile's sensor policies in the order a year in service would have run them. */
const TIMESCALE_UPKEEP = [
  ['refresh hourly', 'policy_refresh_continuous_aggregate', 'sensor_readings_hourly'],
  ['refresh daily', 'policy_refresh_continuous_aggregate', 'sensor_readings_daily'],
  ['columnstore hourly', 'policy_compression', 'sensor_readings_hourly'],
  ['columnstore daily', 'policy_compression', 'sensor_readings_daily'],
  ['compress readings', 'policy_compression', 'sensor_readings'],
] as const;

/**
 * The store's upkeep as it would have run up to `at`, then VACUUM ANALYZE. postgres: partitions,
 * closed months compacted; timescale: each policy run once (the server's clock is past every chunk).
 */
export async function upkeepAfter(db: BenchDatabase, at: Date): Promise<{ seconds: number; steps: string[] }> {
  const started = performance.now();
  const steps: string[] = [];
  // a connection of its own: the pool's statement deadline is the API's, not a year of upkeep's
  const client = await untimedClient(db);
  try {
    if (db.profile === 'timescale') {
      const { rows: jobs } = await client.query<{ job_id: number; proc_name: string; hypertable_name: string }>(
        `SELECT job_id, proc_name, hypertable_name FROM timescaledb_information.jobs ORDER BY job_id`,
      );
      for (const [what, proc, table] of TIMESCALE_UPKEEP) {
        const job = jobs.find((candidate) => candidate.proc_name === proc && candidate.hypertable_name === table);
        if (!job) continue;
        await client.query('CALL run_job($1)', [job.job_id]);
        steps.push(what);
      }
    } else {
      await maintainStore(client, at);
      while ((await compactAggregates(client, at)) > 0);
      steps.push('partitions', 'closed months of the aggregate tables compacted');
    }
    await client.query('VACUUM ANALYZE');
  } finally {
    await client.end();
  }
  return { seconds: (performance.now() - started) / 1000, steps };
}

/** A connection without the API pool's deadlines (UTC, like the pool's), for long maintenance statements. */
export async function untimedClient(db: Pick<BenchDatabase, 'url'>): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: db.url, options: '-c TimeZone=UTC' });
  await client.connect();
  return client;
}

/** What the timescale aggregates look like on disk now: chunks, and how many are compressed. */
export async function aggregateLayout(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query<{ view_name: string; interval: string; chunks: number; compressed: number }>(`
    SELECT a.view_name, d.time_interval::text AS interval, count(c.chunk_name)::int AS chunks,
           (count(c.chunk_name) FILTER (WHERE c.is_compressed))::int AS compressed
    FROM timescaledb_information.continuous_aggregates a
    JOIN timescaledb_information.dimensions d
      ON d.hypertable_schema = a.materialization_hypertable_schema AND d.hypertable_name = a.materialization_hypertable_name
    LEFT JOIN timescaledb_information.chunks c
      ON c.hypertable_schema = a.materialization_hypertable_schema AND c.hypertable_name = a.materialization_hypertable_name
    WHERE a.view_name IN ('sensor_readings_hourly', 'sensor_readings_daily')
    GROUP BY 1, 2 ORDER BY 1 DESC`);
  return rows.map((row) => `${row.view_name}: ${row.chunks} chunks (${row.compressed} compressed), new chunks ${row.interval}`).join('; ');
}

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

/** The real app on a bench database, ready, on `clock`; its rate limits lifted unless `realLimits`. */
export async function buildBenchApp(db: Pick<BenchDatabase, 'url' | 'pool'>, clock = new BenchClock(), realLimits = false) {
  const { buildApp } = await import('../../src/app.js');
  const { loadConfig } = await import('../../src/config.js');
  const app = await buildApp({
    config: loadConfig({ DATABASE_URL: db.url, JWT_SECRET: BENCH_JWT_SECRET, LOG_LEVEL: 'warn' }),
    pool: db.pool,
    clock,
    rateLimitOverrides: realLimits ? undefined : { analytics_api_token: 1e9, authenticated_write: 1e9, public_read: 1e9 },
  });
  await app.ready();
  return app;
}

/** The real app on the bench database (rate limits lifted), and a sensor_data token's headers. */
export async function startBenchApp(db: BenchDatabase, company: BenchCompany) {
  const { mintEmployeeJwt } = await import('../../src/auth/jwt.js');
  const clock = new BenchClock();
  const app = await buildBenchApp(db, clock);
  const jwt = await mintEmployeeJwt({ secret: BENCH_JWT_SECRET, userId: company.employeeId, now: clock.now() });
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/api-tokens',
    headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
    payload: { name: 'bench', scopes: ['sensor_data'], cooling_unit_ids: [], expires_at: null },
  });
  if (created.statusCode !== 201) throw new Error(`token: ${created.statusCode} ${created.body}`);
  const headers = { authorization: `Bearer ${(created.json() as { token: string }).token}` };
  return { app, clock, headers };
}
