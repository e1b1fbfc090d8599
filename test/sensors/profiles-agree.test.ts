// The two storage profiles answer alike, row for row: the same readings (across hour, day, month
// and year boundaries, to the microsecond, with late readings into the materialized part and
// duplicates) loaded the same way into a postgres-profile database (the local PostgreSQL) and a
// timescale-profile database (the TimescaleDB server); sensor_readings, sensor_readings_hourly
// and sensor_readings_daily compared row for row, and so are the pages of GET /api/v1/sensor-data
// raw, hourly and daily. Then again after each profile's upkeep (postgres: partitions and aggregate
// compaction; timescale: its refresh and compression policies, run with run_job).
import t, { type Test } from 'tap';
import type { StorageProfile } from '../../src/sensors/store.js';
import { compactAggregates, maintainStore, materializeAggregates } from '../../src/sensors/store.js';
import { readingChunks } from '../../src/sensors/generate.js';
import type { IngestStats } from '../../src/sensors/ingest.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { createProfileDatabase, CSV_HEADER, loadReadings, NOW, type Page } from '../helpers/sensor-world.js';
import { SENSOR_POLICY_PROCS } from '../helpers/timescale.js';
import { seededRandom } from '../helpers/random.js';
import { issueToken } from '../helpers/tokens.js';

/** Values computed by the aggregates (means) may differ in the last bits between the profiles. */
const TOLERANCE = 1e-9;

const generated = (firstUnitId: number, days: number, end: string, seed: number) =>
  [...readingChunks({ units: 3, firstUnitId, days, end: new Date(end), seed })].join('');

/** Readings on the edges of hours, days, months and a year, to the microsecond, with odd values. */
function edgeReadings(units: number[]): string {
  const random = seededRandom(11); // the same "random" values in both databases
  const instants = [
    '2025-12-31T23:59:59.999999Z',
    '2026-01-01T00:00:00Z',
    '2026-01-01T00:00:00.000001Z',
    '2026-02-28T23:59:59.999999Z',
    '2026-03-01T00:00:00Z',
    '2026-02-28T22:59:59.5Z',
    '2026-02-28T23:00:00.000001Z',
    '2026-03-01T00:59:59.999999+00:00',
    '2026-03-01T01:00:00+01:00',
    '2026-02-27T12:34:56.789012Z',
    '2026-03-02T23:30:00.25-00:30',
  ];
  const lines: string[] = [];
  for (const [i, at] of instants.entries()) {
    for (const unit of units) {
      for (const type of ['TEMPERATURE', 'HUMIDITY']) {
        const value = i % 4 === 0 ? -(random() * 30).toFixed(6) : Number((random() * 100).toPrecision(8));
        lines.push(`${unit},${type},${at},${value}`);
      }
    }
  }
  return [CSV_HEADER, ...lines].join('\n');
}

interface Side {
  profile: StorageProfile;
  ctx: TestApp;
  headers: Record<string, string>;
  units: number[];
  /** what each load reported, in order */
  loads: { label: string; stats: IngestStats }[];
}

async function buildSide(t: Test, profile: StorageProfile): Promise<Side> {
  const db = await createProfileDatabase(t, profile);
  const ctx = await createTestApp(t, {}, { database: db });
  ctx.clock.set(NOW);
  const a = await createCompany(db.pool, 'Agree Co');
  const b = await createCompany(db.pool, 'Other Co');
  const token = await issueToken(ctx, a.employeeId, { scopes: ['sensor_data'] });
  const units = [...a.unitIds.slice(0, 3), b.unitIds[0]!];
  const loads: Side['loads'] = [];
  // one batch at a time: two in flight fail on the timescale profile when late (ingest.test.ts)
  const load = async (label: string, text: string) => {
    const stats = await loadReadings(db, text, () => NOW, { batchSize: 700, loadsInFlight: 1 });
    loads.push({ label, stats });
    return stats;
  };

  const a1 = units[0]!;
  // four days over the end of February, in batches
  t.match(await load("four days over a month's end", generated(a1, 4, '2026-03-03T00:00:00Z', 3)), {
    inserted: 2304,
    duplicates: 0,
    batches: 4,
  });
  // timescale: what its refresh policies would have materialized by March 2nd; postgres: nothing to do
  await materializeAggregates(db.pool, profile, new Date('2026-03-02T00:00:00Z'));
  // late: the readings on the edges (some on the 15-minute grid: duplicates), into the
  // materialized part, and a year's end, months late
  t.match(await load('edges, late', edgeReadings(units)), { rows: 88, inserted: 74, duplicates: 14 });
  t.match(await load("a year's end, months late", generated(a1, 3, '2026-01-02T00:00:00Z', 4)), {
    rows: 1728,
    inserted: 1722,
    duplicates: 6,
  });
  // duplicates: delivered again, within one batch, and a batch that overlaps what is stored
  t.match(await load('the edges again', edgeReadings(units)), { inserted: 0, duplicates: 88 });
  const twice = [
    CSV_HEADER,
    `${a1},HUMIDITY,2026-02-28T23:15:00.5Z,10`,
    `${a1},HUMIDITY,2026-02-28T23:15:00.500000+00:00,11`,
    `${a1},HUMIDITY,2026-02-28T23:15:00Z,12`,
  ].join('\n');
  t.match(await load('a duplicate within one batch, and one already stored', twice), { inserted: 1, duplicates: 2 });
  t.match(await load('five days, four of them stored', generated(a1, 5, '2026-03-04T00:00:00Z', 3)), { inserted: 576, duplicates: 2304 });
  return { profile, ctx, headers: token.headers, units, loads };
}

const RELATIONS = {
  sensor_readings: `SELECT to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS at, cooling_unit_id, specification_type::text AS type, value
    FROM sensor_readings ORDER BY recorded_at, cooling_unit_id, specification_type`,
  sensor_readings_hourly: `SELECT sensor_timestamp_text(bucket) AS at, cooling_unit_id, specification_type::text AS type, value, min, max, sample_count
    FROM sensor_readings_hourly ORDER BY bucket, cooling_unit_id, specification_type`,
  sensor_readings_daily: `SELECT sensor_timestamp_text(bucket) AS at, cooling_unit_id, specification_type::text AS type, value, min, max, sample_count, hour_count
    FROM sensor_readings_daily ORDER BY bucket, cooling_unit_id, specification_type`,
};

const QUERIES = [
  'start_date=2025-12-29&end_date=2026-01-02',
  'start_date=2026-02-26&end_date=2026-03-04',
  'aggregation=hourly&start_date=2025-12-29&end_date=2026-03-04',
  'aggregation=daily&start_date=2025-12-01&end_date=2026-03-31',
  'aggregation=hourly&specification_type=HUMIDITY&start_date=2026-02-28&end_date=2026-03-01',
];

/** Rows equal field for field; `value`, a computed mean where aggregated, to TOLERANCE there. */
function sameRows(t: Test, actual: Record<string, unknown>[], expected: Record<string, unknown>[], label: string, exact: boolean) {
  const tolerance = exact ? 0 : TOLERANCE;
  t.equal(actual.length, expected.length, `${label}: ${expected.length} rows in both`);
  const strip = (row: Record<string, unknown>) => ({ ...row, value: undefined });
  let differing = 0;
  let first = '';
  for (let i = 0; i < Math.max(actual.length, expected.length); i++) {
    const [x, y] = [actual[i], expected[i]];
    const ok =
      x !== undefined &&
      y !== undefined &&
      JSON.stringify(strip(x)) === JSON.stringify(strip(y)) &&
      Math.abs((x.value as number) - (y.value as number)) <= tolerance * Math.max(1, Math.abs(y.value as number));
    if (!ok) {
      differing += 1;
      first ||= `row ${i}: ${JSON.stringify(x)} vs ${JSON.stringify(y)}`;
    }
  }
  t.equal(differing, 0, `${label}: row for row the same${first ? ` (first difference: ${first})` : ''}`);
}

async function compare(t: Test, postgres: Side, timescale: Side, when: string) {
  for (const [relation, sql] of Object.entries(RELATIONS)) {
    const [p, s] = await Promise.all([postgres.ctx.db.pool.query(sql), timescale.ctx.db.pool.query(sql)]);
    t.ok(p.rows.length > 0, `${relation}: not empty`);
    sameRows(t, s.rows, p.rows, `${when}, ${relation}`, relation === 'sensor_readings');
  }
  for (const query of QUERIES) {
    const [p, s] = await Promise.all([pages(postgres, query), pages(timescale, query)]);
    t.ok(p.records.length > 0, `${query}: records`);
    t.same(s.meta, p.meta, `${when}, GET ${query}: the same meta on every page`);
    sameRows(t, s.records, p.records, `${when}, GET ${query}`, !query.startsWith('aggregation='));
  }
}

/** Every page of a query at 400 records a page, and each page's meta. */
async function pages(side: Side, query: string) {
  const records: Page['data'] = [];
  const meta: Page['meta'][] = [];
  for (let page = 1; ; page++) {
    const response = await side.ctx.app.inject({
      method: 'GET',
      url: `/api/v1/sensor-data?${query}&page_size=400&page=${page}`,
      headers: side.headers,
    });
    if (response.statusCode !== 200) throw new Error(`${side.profile} ${query}: ${response.statusCode} ${response.body}`);
    const body = response.json<Page>();
    records.push(...body.data);
    // a cursor is sealed with its database's own key: the two agree on whether there is one
    const cursor = body.meta.pagination.next_cursor === null ? null : 'a cursor';
    meta.push({ ...body.meta, pagination: { ...body.meta.pagination, next_cursor: cursor } });
    if (!body.meta.pagination.has_next) break;
  }
  return { records, meta };
}

t.test('the same readings give the same rows in both profiles', async (t) => {
  const postgres = await buildSide(t, 'postgres');
  const timescale = await buildSide(t, 'timescale');
  t.same(timescale.units, postgres.units, 'the same unit ids on both sides');
  t.same(timescale.loads, postgres.loads, 'every load reported the same: read, inserted, duplicates, batches');
  await compare(t, postgres, timescale, 'loaded');

  // each profile's upkeep: postgres keeps partitions ahead and compacts closed months' aggregate tables;
  // timescale's policies materialize everything and compress every chunk, the readings' and the
  // aggregates' (all past seven days by the server's clock), in job order: refreshes first
  await maintainStore(postgres.ctx.db.pool, new Date('2026-04-10T00:00:00Z'));
  t.ok((await compactAggregates(postgres.ctx.db.pool, new Date('2026-04-10T00:00:00Z'), 12)) >= 2, 'postgres: closed months compacted');
  const { rows: jobs } = await timescale.ctx.db.pool.query<{ job_id: number }>(
    'SELECT job_id FROM timescaledb_information.jobs WHERE proc_name = ANY($1) ORDER BY job_id',
    [SENSOR_POLICY_PROCS],
  );
  t.equal(jobs.length, 5, "timescale: two refresh policies, compression, and both aggregates' columnstore");
  for (const job of jobs) await timescale.ctx.db.pool.query('CALL run_job($1)', [job.job_id]);
  const { rows: compression } = await timescale.ctx.db.pool.query<{ relation: string; compressed: number; all: number }>(`
    SELECT coalesce(a.view_name, c.hypertable_name::text) AS relation,
           (count(*) FILTER (WHERE c.is_compressed))::int AS compressed, count(*)::int AS all
    FROM timescaledb_information.chunks c
    LEFT JOIN timescaledb_information.continuous_aggregates a
      ON a.materialization_hypertable_schema = c.hypertable_schema AND a.materialization_hypertable_name = c.hypertable_name
    GROUP BY 1 ORDER BY 1`);
  t.same(
    compression.map((row) => row.relation),
    ['sensor_readings', 'sensor_readings_daily', 'sensor_readings_hourly'],
    'timescale: chunks of the readings and both aggregates',
  );
  for (const row of compression)
    t.ok(row.compressed > 0 && row.compressed === row.all, `timescale: ${row.relation}: ${row.compressed} chunks compressed`);
  for (const side of [postgres, timescale]) side.ctx.clock.advance(60 * 60_000);
  await compare(t, postgres, timescale, 'after the upkeep');
});
