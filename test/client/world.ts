// The partner toolkit's world: the real app listening on a loopback port (the client speaks real
// HTTP), on a fresh database with company A's three units holding a year (2025) of 15-minute
// readings loaded through the ingest, company B with a unit of its own, and helpers that read
// what the database holds so an export can be compared with it row for row.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import type { Test } from 'tap';
import { lineRuns, parseReadings, ReadingValidator } from '../../src/sensors/formats.js';
import { readingChunks } from '../../src/sensors/generate.js';
import { ingestReadings } from '../../src/sensors/ingest.js';
import { createTestApp, type TestApp, type TestAppOptions } from '../helpers/app.js';
import { createTestDatabase, derivedTemplate, postgresServer, type TestDatabase } from '../helpers/db.js';
import { createCompany, findCompany, type CompanyFixture } from '../helpers/fixtures.js';
import { issueToken } from '../helpers/tokens.js';
import { countingRelay, type Relay } from './run-export.js';

export const YEAR = { from: '2025-01-01', to: '2025-12-31' } as const;
/** hourly records of one unit over 2025: 365 days x 24 hours x 2 types */
export const HOURLY_RECORDS_PER_UNIT = 365 * 24 * 2;

export interface ExportWorld {
  ctx: TestApp;
  db: TestDatabase;
  baseUrl: string;
  a: CompanyFixture;
  b: CompanyFixture;
  /** company A's units with readings */
  unitIds: number[];
  /** a company-wide sensor_data + utilization token of A */
  token: string;
  /** the service behind a relay that counts requests (a child process's too) */
  relay: Relay;
  issue(options?: { scopes?: string[]; cooling_unit_ids?: number[] }): Promise<{ id: string; token: string }>;
}

export interface WorldOptions extends TestAppOptions {
  env?: Record<string, string>;
  /** loads a year of readings for company A's units (default true) */
  readings?: boolean;
}

/** Loads `days` of readings ending 2026-01-01 for the units, through the ingest (COPY). */
export async function loadYear(db: TestDatabase, unitIds: number[], days = 365): Promise<number> {
  let inserted = 0;
  // the units are consecutive ids (createCompany inserts them one after the other)
  const chunks = readingChunks({ units: unitIds.length, firstUnitId: unitIds[0]!, days, end: new Date('2026-01-01T00:00:00Z'), seed: 11 });
  const stats = await ingestReadings(
    db.pool,
    parseReadings(lineRuns(Readable.from(chunks)), 'csv', new ReadingValidator(() => new Date('2026-01-02T00:00:00Z'))),
    { batchSize: 100_000 },
  );
  inserted += stats.inserted;
  return inserted;
}

// the two companies and A's year of readings, loaded once a test run (eight files use them; the
// load is ~210k readings through the ingest and its rollups) and cloned by each file
const WORLD_COMPANIES = ['Export Co', 'Other Co'] as const;

async function fillWorld(db: TestDatabase, readings: boolean) {
  const a = await createCompany(db.pool, WORLD_COMPANIES[0]);
  await createCompany(db.pool, WORLD_COMPANIES[1]);
  if (!readings) return;
  const inserted = await loadYear(db, a.unitIds);
  if (inserted !== a.unitIds.length * 365 * 96 * 2) throw new Error(`loaded ${inserted} readings, not a year of ${a.unitIds.length} units`);
}

/** A database cloned from the world's template: the two companies and (readings) A's year. */
export async function createWorldDatabase(t: Test, readings = true): Promise<TestDatabase> {
  const template = await derivedTemplate(readings ? 'export_world' : 'export_world_empty', (db) => fillWorld(db, readings));
  return createTestDatabase(t, postgresServer, template);
}

/** The world; options.database, when given, must be one createWorldDatabase made (or a way to it). */
export async function createExportWorld(t: Test, options: WorldOptions = {}): Promise<ExportWorld> {
  const database = options.database ?? (await createWorldDatabase(t, options.readings ?? true));
  const ctx = await createTestApp(t, options.env ?? {}, { ...options, database });
  const { db } = ctx;
  const a = await findCompany(db.pool, WORLD_COMPANIES[0]);
  const b = await findCompany(db.pool, WORLD_COMPANIES[1]);
  const unitIds = a.unitIds;
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const address = ctx.app.server.address() as { port: number };
  const issue = (issueOptions: { scopes?: string[]; cooling_unit_ids?: number[] } = {}) =>
    issueToken(ctx, a.employeeId, {
      scopes: issueOptions.scopes ?? ['sensor_data', 'utilization'],
      cooling_unit_ids: issueOptions.cooling_unit_ids ?? [],
    });
  const { token } = await issue();
  const baseUrl = `http://127.0.0.1:${address.port}`;
  const relay = await countingRelay(baseUrl);
  t.teardown(() => relay.close());
  return { ctx, db, baseUrl, a, b, unitIds, token, issue, relay };
}

/** The unit files of an export's folder, by name. */
export const unitFilesIn = (dir: string) =>
  readdirSync(dir)
    .filter((name) => name.startsWith('cooling-unit-'))
    .sort();

export interface Canonical {
  count: number;
  checksum: string;
}

/** One record as a line both sides agree on: instant, unit, type and the numbers as JavaScript prints them. */
export const canonicalLine = (r: {
  timestamp: string;
  cooling_unit_id: number;
  specification_type: string;
  value: number;
  sample_count: number;
  min?: number | null;
  max?: number | null;
}) =>
  `${new Date(r.timestamp).toISOString()}|${r.cooling_unit_id}|${r.specification_type}|${r.value}|${r.sample_count}|${r.min ?? ''}|${r.max ?? ''}`;

function canonical(lines: string[]): Canonical {
  const hash = createHash('sha256');
  for (const line of lines) hash.update(`${line}\n`);
  return { count: lines.length, checksum: hash.digest('hex') };
}

/** The unit's hourly aggregate rows in 2025, as the database holds them, in the export's order. */
export async function databaseHourly(db: TestDatabase, unitId: number): Promise<Canonical> {
  const { rows } = await db.pool.query<{
    timestamp: Date;
    cooling_unit_id: number;
    specification_type: string;
    value: number;
    sample_count: number;
    min: number;
    max: number;
  }>(
    `SELECT bucket AS timestamp, cooling_unit_id, specification_type::text AS specification_type, value, sample_count::int AS sample_count, min, max
     FROM sensor_readings_hourly
     WHERE cooling_unit_id = $1 AND bucket >= '2025-01-01T00:00:00Z' AND bucket < '2026-01-01T00:00:00Z'
     ORDER BY bucket, specification_type::text COLLATE "C"`,
    [unitId],
  );
  // the service prints a mean to 12 significant digits (sum / count in float8 is noisy:
  // 91.57499999999999 for 91.575); min and max are readings, never rounded
  return canonical(
    rows.map((row) => canonicalLine({ ...row, value: Number(row.value.toPrecision(12)), timestamp: row.timestamp.toISOString() })),
  );
}

/** An exported file read back: CSV (header, then the columns of client/src/export/plan.ts) or NDJSON. */
export function fileRecords(path: string, format: 'csv' | 'ndjson'): Canonical & { header: string | null } {
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  if (lines.at(-1) !== '') throw new Error(`${path} does not end with a newline`);
  lines.pop();
  if (format === 'ndjson') {
    return { header: null, ...canonical(lines.map((line) => canonicalLine(JSON.parse(line) as Parameters<typeof canonicalLine>[0]))) };
  }
  const [header, ...rows] = lines;
  const number = (text: string | undefined) => (text === undefined || text === '' ? null : Number(text));
  return {
    header: header ?? null,
    ...canonical(
      rows.map((row) => {
        const [timestamp, unit, type, value, count, min, max] = row.split(',');
        return canonicalLine({
          timestamp: timestamp!,
          cooling_unit_id: Number(unit),
          specification_type: type!,
          value: Number(value),
          sample_count: Number(count),
          min: number(min),
          max: number(max),
        });
      }),
    ),
  };
}
