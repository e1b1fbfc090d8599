// What the bench/sensor-*.ts scripts share: the command line (`--quick`, `--profile
// postgres|timescale` or BENCH_SENSOR_PROFILE, `--readings`), a throwaway database of one storage
// profile (without a server for it every target is NOT MEASURED and the script exits 0), a
// company whose readings go through the real ingest, the store's upkeep as a year in service
// leaves it, the app on it, alternating rounds, and the PASS/MISS report whose final JSON line
// kit/sensor-targets.ts reads. run() holds a script's whole life.
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { createPool } from '../../src/db/pool.js';
import { lineRuns, parseReadings, ReadingValidator } from '../../src/sensors/formats.js';
import { readingChunks } from '../../src/sensors/generate.js';
import { ingestReadings } from '../../src/sensors/ingest.js';
import { pauseSensorPolicies } from '../../src/sensors/policy-health.js';
import { compactAggregates, maintainStore } from '../../src/sensors/store.js';
import { saveScriptResult } from './checkout.js';
import { isSensorProfile, profileServer, type SensorProfile, shownUrl } from './sensor-profiles.js';
import { fixed, median, timed } from './statistics.js';
import { createThrowawayDatabase } from './throwaway-db.js';

/** The command line every sensor script reads (others' options are let through). */
export const args = parseArgs({
  options: { profile: { type: 'string' }, quick: { type: 'boolean' }, readings: { type: 'string' } },
  strict: false,
}).values as { profile?: string; quick?: boolean; readings?: string };

export const quick = args.quick === true || process.env.BENCH_QUICK === '1';

function chosenProfile(): SensorProfile {
  const requested = args.profile ?? process.env.BENCH_SENSOR_PROFILE ?? 'postgres';
  if (!isSensorProfile(requested)) {
    console.error(`--profile (or BENCH_SENSOR_PROFILE) must be postgres or timescale, not "${requested}"`);
    process.exit(2);
  }
  return requested;
}

/** The storage profile this run measures. */
export const profile: SensorProfile = chosenProfile();

/** Where every sensor script's readings end: the bench's year, 2025, whole. */
export const END = new Date('2026-01-01T00:00:00Z');

export interface BenchDatabase {
  url: string;
  pool: pg.Pool;
  profile: SensorProfile;
  /** one line for the report: profile, server and versions */
  note: string;
  /** `step` runs on drop(), before the pool ends (last added first): an app's close, a generator's */
  atDrop(step: () => unknown): void;
  drop(): Promise<void>;
}

/** The kit's keys and names of a script's targets, for the NOT MEASURED lines. */
export interface TargetName {
  key?: string;
  name: string;
}

export interface TargetLine extends TargetName {
  pass: boolean;
  measured: string;
  ratio?: number;
  detail: string;
}

/**
 * A sensor script: its title said (with " (quick)"), a bench database of the run's profile (every
 * target NOT MEASURED without a server), `body`'s verdicts reported, the database dropped (and what
 * was registered with atDrop closed) whichever way `body` ends.
 */
export async function run(
  script: { title: string; label: string; poolSize: number; targets: TargetName[] },
  body: (db: BenchDatabase) => Promise<TargetLine[]>,
): Promise<void> {
  console.log(`${script.title}${quick ? ' (quick)' : ''}`);
  const db = await createBenchDatabase(script.label, script.poolSize, script.targets);
  console.log(db.note);
  try {
    report(await body(db));
  } finally {
    await db.drop();
  }
}

/**
 * A migrated database of the run's profile, dropped on every way out (kit/throwaway-db.ts). The
 * profile is asked for by name (SENSOR_STORAGE): the benchmarks measure it, whatever the server
 * could offer. timescale: the sensor policies are paused at once (the scheduler would run them at
 * moments no benchmark chose); upkeepAfter() runs them. No server for the profile: every target
 * NOT MEASURED, exit 0.
 */
export async function createBenchDatabase(label: string, poolSize: number, targets: TargetName[]): Promise<BenchDatabase> {
  const server = await profileServer(profile);
  if (server.adminUrl === null) notMeasured(targets, server.reason);
  const database = await createThrowawayDatabase({
    label: `${label}_${profile === 'timescale' ? 'ts' : 'pg'}`,
    migrate: { sensorStorage: profile, sensorRetentionDays: null },
    adminUrl: server.adminUrl,
  });
  const pool = createPool(database.url, poolSize);
  const steps: (() => unknown)[] = [];
  const bench: BenchDatabase = {
    url: database.url,
    pool,
    profile,
    note: '',
    atDrop: (step) => steps.push(step),
    // the pool after the steps, so its clients end cleanly rather than being cut by the forced drop
    drop: async () => {
      for (const step of steps.splice(0).reverse()) await Promise.resolve(step()).catch((error: unknown) => console.error(error));
      await pool.end().catch(() => {});
      await database.drop();
    },
  };
  try {
    const { rows } = await pool.query<{ postgres: string; timescaledb: string | null }>(`
      SELECT split_part(version(), ' on ', 1) AS postgres, (SELECT extversion FROM pg_extension WHERE extname = 'timescaledb') AS timescaledb`);
    const versions = rows[0]!.timescaledb ? `TimescaleDB ${rows[0]!.timescaledb} on ${rows[0]!.postgres}` : rows[0]!.postgres;
    const host = new URL(server.adminUrl);
    bench.note = `storage profile: ${profile} (${versions} at ${shownUrl(`postgres://${host.host}`)})`;
    if (profile === 'timescale') {
      await pauseSensorPolicies(pool);
      bench.note += '; sensor policies paused, run by the benchmark where a year in service would have run them';
    }
  } catch (error) {
    await bench.drop();
    throw error;
  }
  return bench;
}

const lineName = (target: TargetName) => `${target.key ? `${target.key} ` : ''}${target.name}`;
const byKey = <T extends TargetName>(targets: T[], entry: (target: T) => object) =>
  Object.fromEntries(targets.map((target) => [target.key ?? target.name, entry(target)]));

/** Every target NOT MEASURED with the reason (and the JSON line the kit reads); exits 0. */
export function notMeasured(targets: TargetName[], reason: string): never {
  const detail = `${reason} (storage profile ${profile})`;
  for (const target of targets) console.log(`NOT MEASURED ${lineName(target)}: ${detail}`);
  console.log(JSON.stringify({ profile, targets: byKey(targets, () => ({ status: 'not measured', measured: '', detail })) }));
  process.exit(0);
}

/**
 * One line per target (PASS/MISS), the file the figures are kept in (kit/checkout.ts saveScriptResult), then
 * the JSON line the bench kit parses (with the run's storage profile), last.
 */
export function report(targets: TargetLine[]) {
  for (const target of targets) console.log(`${target.pass ? 'PASS' : 'MISS'} ${lineName(target)}: ${target.measured}`);
  const json = byKey(targets, ({ pass, measured, ratio, detail }) => ({ pass, measured, ratio, detail }));
  console.log(`figures: ${saveScriptResult({ profile, targets: json })}`);
  console.log(JSON.stringify({ profile, targets: json }));
}

/**
 * `rounds` rounds of `measure` for every kind, the order turned each round (rotated by one; with
 * `mirror`, reversed every other round), so a drift of the machine over the run hits every kind
 * alike. Each kind's results, in the order they ran.
 */
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

/** Milliseconds `fn` took. */
export const msOf = async (fn: () => Promise<unknown>) => (await timed(fn)).ms;

/** The median of each list. */
export const medians = <K extends string>(lists: Record<K, number[]>) =>
  Object.fromEntries(Object.entries<number[]>(lists).map(([key, values]) => [key, median(values)])) as Record<K, number>;

/** A COPY ... TO STDOUT statement's output through `stages` (a compressor) into nowhere: bytes COPY sent, bytes out of the last stage. */
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

/**
 * Generated CSV text as the ingest reads a file: split into lines, parsed and validated (readings
 * up to `end` accepted), in runs. What `npm run ingest` does with its input, minus the file.
 */
export function csvReadingRuns(csv: Iterable<string>, end: Date) {
  return parseReadings(lineRuns(Readable.from(csv)), 'csv', new ReadingValidator(() => end));
}

/** units x days of generated 15-minute readings ending at END as CSV text in memory, and how many readings. */
export function generatedCsv(units: number, days: number, seed: number) {
  return { csv: [...readingChunks({ units, days, end: END, seed })], readings: units * days * 192 };
}

/** The CSV through the real ingest in batches of 50,000 (`loadsInFlight` at once), checked to have loaded `expected` readings. */
export async function ingestCsv(pool: pg.Pool, csv: string[], expected: number, loadsInFlight?: number) {
  const { inserted } = await ingestReadings(pool, csvReadingRuns(csv, END), { batchSize: 50_000, loadsInFlight });
  if (inserted !== expected) throw new Error(`ingest loaded ${inserted} of ${expected}`);
}

/** units x days of 15-minute readings ending at `end`, through the real ingest (COPY). */
export async function loadReadings(pool: pg.Pool, units: number, days: number, end: Date, seed = 1) {
  const started = performance.now();
  const stats = await ingestReadings(pool, csvReadingRuns(readingChunks({ units, days, end, seed }), end), { batchSize: 100_000 });
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

/** The timescale profile's sensor policies in the order a year in service would have run them. */
const TIMESCALE_UPKEEP = [
  { what: 'refresh hourly', proc: 'policy_refresh_continuous_aggregate', table: 'sensor_readings_hourly' },
  { what: 'refresh daily', proc: 'policy_refresh_continuous_aggregate', table: 'sensor_readings_daily' },
  { what: 'columnstore hourly', proc: 'policy_compression', table: 'sensor_readings_hourly' },
  { what: 'columnstore daily', proc: 'policy_compression', table: 'sensor_readings_daily' },
  { what: 'compress readings', proc: 'policy_compression', table: 'sensor_readings' },
] as const;

export type UpkeepStep = (typeof TIMESCALE_UPKEEP)[number]['what'];

/** A company of `units` units with `days` of readings up to `end` through the real ingest, said on stdout. */
export async function companyWithReadings(db: BenchDatabase, units: number, days: number, end: Date) {
  const company = await createUnits(db.pool, units);
  const loaded = await loadReadings(db.pool, units, days, end);
  console.log(`loaded ${loaded.rows} readings (${units} units x ${days} days) through the ingest in ${fixed(loaded.seconds)} s`);
  return { company, readings: loaded.rows };
}

/**
 * The store most scripts measure: a company's year of readings to END, the whole upkeep as it
 * stands a few days after (every policy's offset passed, said on stdout), and the app on it
 * (closed on the database's drop).
 */
export async function storeWithApp(db: BenchDatabase, units: number, days: number) {
  const { company } = await companyWithReadings(db, units, days, END);
  const upkeep = await upkeepAfter(db, new Date(END.getTime() + 4 * 86_400_000));
  console.log(
    `upkeep over the loaded year (${upkeep.steps.join(', ')}; VACUUM ANALYZE): ${fixed(upkeep.seconds)} s` +
      (db.profile === 'timescale' ? `; ${await aggregateLayout(db.pool)}` : ''),
  );
  const bench = await startBenchApp(db, company);
  db.atDrop(() => bench.app.close());
  return { company, ...bench };
}

/**
 * The store's periodic upkeep as it would have run over the loaded period, then VACUUM ANALYZE.
 * postgres: partitions, and closed months of the aggregate tables compacted. timescale: the sensor
 * policies, each run once with CALL run_job (both aggregates materialized, then compressed where
 * the layout says so, then the readings' chunks compressed: the server's clock is past every
 * loaded chunk), or only the steps named in `only` (each step runs once per database).
 * Returns the seconds it took and the steps that ran (a policy the database lacks is skipped).
 */
export async function upkeepAfter(db: BenchDatabase, at: Date, only?: UpkeepStep[]): Promise<{ seconds: number; steps: string[] }> {
  const started = performance.now();
  const steps: string[] = [];
  // a connection of its own: the pool's statement deadline is the API's, not a year of upkeep's
  const client = await untimedClient(db);
  try {
    if (db.profile === 'timescale') {
      const { rows: jobs } = await client.query<{ job_id: number; proc_name: string; hypertable_name: string }>(
        `SELECT job_id, proc_name, hypertable_name FROM timescaledb_information.jobs ORDER BY job_id`,
      );
      for (const step of TIMESCALE_UPKEEP) {
        if (only && !only.includes(step.what)) continue;
        const job = jobs.find((candidate) => candidate.proc_name === step.proc && candidate.hypertable_name === step.table);
        if (!job) continue;
        await client.query('CALL run_job($1)', [job.job_id]);
        steps.push(step.what);
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
