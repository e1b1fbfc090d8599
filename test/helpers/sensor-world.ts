// The sensor history world, the same in both storage profiles: the real app on a fresh database of
// the profile (postgres: the local PostgreSQL; timescale: the TimescaleDB server,
// test/helpers/timescale.ts), company A with ten and a half days of readings for its three units
// loaded through the ingest (COPY, in both profiles), and company B with none. Route tests
// (test/routes/sensor-data/) and store tests (test/sensors/) run their cases in each profile with
// `eachProfile`: the store's aggregates, the ingest and GET /api/v1/sensor-data must behave the
// same whatever is underneath.
import { Readable } from 'node:stream';
import type { Test } from 'tap';
import { lineRuns, parseReadings, ReadingValidator, type ReadingFormat } from '../../src/sensors/formats.js';
import { readingChunks } from '../../src/sensors/generate.js';
import { COUNTS_TTL_MS } from '../../src/sensors/history.js';
import { ingestReadings, type IngestOptions, type IngestStats } from '../../src/sensors/ingest.js';
import { materializeAggregates, storageProfile, type StorageProfile } from '../../src/sensors/store.js';
import { createTestApp, type TestApp } from './app.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { createCompany, type CompanyFixture } from './fixtures.js';
import { createTimescaleDatabase } from './timescale.js';
import { issueToken } from './tokens.js';

export const PROFILES: readonly StorageProfile[] = ['postgres', 'timescale'];

/** The app's clock in the world: midday of 2026-03-15 (the server's own clock is real). */
export const NOW = new Date('2026-03-15T12:07:00Z');
export const CSV_HEADER = 'cooling_unit_id,specification_type,recorded_at,value';

export interface Page {
  data: Record<string, unknown>[];
  meta: { company_id: number; filters: Record<string, unknown>; pagination: Record<string, number | boolean | string | null> };
}

export type PageResponse = Page & { error?: { code: string; message?: string; details?: { field?: string } } };

export type LoadOptions = IngestOptions & { format?: ReadingFormat };

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** Runs `fn` once per storage profile, each in its own subtest named after the profile. */
export function eachProfile(t: Test, fn: (t: Test, profile: StorageProfile) => Promise<void>): void {
  for (const profile of PROFILES) t.test(`${profile} profile`, (t) => fn(t, profile));
}

/** A fresh migrated database of `profile`, on the server that serves it. */
export function createProfileDatabase(t: Teardown, profile: StorageProfile): Promise<TestDatabase> {
  return profile === 'timescale' ? createTimescaleDatabase(t) : createTestDatabase(t);
}

/** Loads readings written as CSV (or NDJSON) through the ingest, validated at `now()`. */
export function loadReadings(db: TestDatabase, text: string, now: () => Date, options: LoadOptions = {}): Promise<IngestStats> {
  return ingestReadings(
    db.pool,
    parseReadings(lineRuns(Readable.from([text])), options.format ?? 'csv', new ReadingValidator(now)),
    options,
  );
}

/**
 * The aggregates agree with the readings: raw count = hourly and daily sample_count sums, daily
 * hour_count adds up to the hourly rows, and every daily value, min, max and count is that of its
 * readings.
 */
export async function expectConsistent(t: Test, db: TestDatabase, label: string, extra: { todo?: string } = {}): Promise<void> {
  const {
    rows: [totals],
  } = await db.pool.query<{ raw: string; hourly: string; daily: string; hours: string; hourly_rows: string }>(`
    SELECT (SELECT count(*) FROM sensor_readings)::text AS raw,
           (SELECT sum(sample_count) FROM sensor_readings_hourly)::text AS hourly,
           (SELECT sum(sample_count) FROM sensor_readings_daily)::text AS daily,
           (SELECT sum(hour_count) FROM sensor_readings_daily)::text AS hours,
           (SELECT count(*) FROM sensor_readings_hourly)::text AS hourly_rows`);
  t.equal(totals!.hourly, totals!.raw, `${label}: raw count = sum of hourly sample_count`, extra);
  t.equal(totals!.daily, totals!.raw, `${label}: raw count = sum of daily sample_count`, extra);
  t.equal(totals!.hours, totals!.hourly_rows, `${label}: daily hour_count adds up to the hourly rows`, extra);
  const { rows: days } = await db.pool.query<{ mismatched: string; days: string }>(`
    WITH raw AS (
      SELECT date_bin('1 day', recorded_at, '2000-01-01 00:00:00+00') AS bucket, cooling_unit_id, specification_type,
             avg(value) AS value, min(value) AS min, max(value) AS max, count(*) AS sample_count,
             count(DISTINCT date_bin('1 hour', recorded_at, '2000-01-01 00:00:00+00')) AS hours
      FROM sensor_readings GROUP BY 1, 2, 3)
    SELECT count(*) FILTER (WHERE d.bucket IS NULL OR r.bucket IS NULL OR abs(d.value - r.value) > 1e-9
      OR d.min <> r.min OR d.max <> r.max OR d.sample_count <> r.sample_count OR d.hour_count <> r.hours)::text AS mismatched,
      count(*)::text AS days
    FROM raw r FULL JOIN sensor_readings_daily d USING (bucket, cooling_unit_id, specification_type)`);
  t.equal(days[0]!.mismatched, '0', `${label}: every daily value is the mean of its readings (and min, max, counts agree)`, extra);
}

export interface SensorWorld {
  ctx: TestApp;
  db: TestDatabase;
  profile: StorageProfile;
  a: CompanyFixture;
  b: CompanyFixture;
  /** company A's three units */
  a1: number;
  a2: number;
  a3: number;
  /** a company-wide sensor_data token of A */
  all: { headers: Record<string, string> };
  /** the ten days of readings as loaded (CSV) */
  generated: string;
  load(text: string, options?: LoadOptions): Promise<IngestStats>;
  get(query: string, headers?: Record<string, string>): Promise<{ status: number; body: PageResponse }>;
  one<T>(text: string, params?: unknown[]): Promise<T>;
  /** moves the app clock past the cached counts' lifetime */
  expired(): void;
  consistent(t: Test, label: string): Promise<void>;
}

export async function createSensorWorld(t: Test, profile: StorageProfile): Promise<SensorWorld> {
  const db = await createProfileDatabase(t, profile);
  const ctx = await createTestApp(t, {}, { database: db });
  ctx.clock.set(NOW);
  const pool = db.pool;
  t.equal(await storageProfile(pool), profile, `the database has the ${profile} profile`);

  const a = await createCompany(pool, 'Sensor Co');
  const b = await createCompany(pool, 'Other Co');
  const [a1, a2, a3] = a.unitIds as [number, number, number];
  const all = await issueToken(ctx, a.employeeId, { scopes: ['sensor_data'] });

  const load = (text: string, options: LoadOptions = {}) => loadReadings(db, text, () => ctx.clock.now(), options);
  const get = async (query: string, headers = all.headers) => {
    const response = await ctx.app.inject({ method: 'GET', url: `/api/v1/sensor-data?${query}`, headers });
    return { status: response.statusCode, body: response.json() as PageResponse };
  };
  const one = async <T>(text: string, params: unknown[] = []) => (await pool.query(text, params)).rows[0] as T;

  // ten and a half days of readings for company A's three units, loaded through the ingest
  const generated = [...readingChunks({ units: 3, firstUnitId: a1, days: 10, end: new Date('2026-03-15T00:00:00Z'), seed: 7 })].join('');
  const first = await load(generated, { batchSize: 2000 });
  t.same(first, { rows: 5760, inserted: 5760, duplicates: 0, bad: 0, batches: 3, abortedAt: null }, 'CSV loaded in batches');
  // and the morning of today, up to 11:45
  const morning = [...readingChunks({ units: 3, firstUnitId: a1, days: 1, end: new Date('2026-03-16T00:00:00Z'), seed: 8 })]
    .join('')
    .split('\n')
    .filter((line, index) => index === 0 || (line.split(',')[2] ?? '~') < '2026-03-15T12:00:00Z')
    .join('\n');
  await load(morning);
  // what TimescaleDB's refresh policies would have done by the app's clock (the template's
  // policies are paused: the server's clock is real); later readings stay real-time
  await materializeAggregates(pool, profile, new Date('2026-03-14T00:00:00Z'));

  return {
    ctx,
    db,
    profile,
    a,
    b,
    a1,
    a2,
    a3,
    all,
    generated,
    load,
    get,
    one,
    expired: () => ctx.clock.advance(COUNTS_TTL_MS + 1000),
    consistent: (t, label) => expectConsistent(t, db, label),
  };
}
