// The timescale profile's hourly aggregate read in bucket order (migration 019): a long window of
// one unit comes from the materialized chunks in bucket order, merged with the buckets above the
// watermark, each bucket's few rows ordered by the rest of the key, instead of one sort of the
// whole answer; and the rows are those of bucketing the readings, the not-yet-materialized hours
// included, in the order of every statement that reads them.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import t from 'tap';
import { createTimescaleDatabase } from '../helpers/timescale.js';

const hourlyPage = readFileSync(new URL('../../sql/queries/sensor-data.sql', import.meta.url), 'utf8')
  .split('-- name: hourlyPage')[1]!
  .split('-- name:')[0]!
  .replace(/;\s*$/, '');

const FROM = '2025-03-01T00:00:00Z';
const END = '2025-07-01T00:00:00Z';
/** the aggregate is materialized up to here; the 30 hours after it are real-time */
const WATERMARK = '2025-06-29T18:00:00Z';

t.test('a unit over months: chunks in bucket order, no sort of the whole answer, the same rows', async (t) => {
  const db = await createTimescaleDatabase(t);
  // a connection of its own: the set-up statements take seconds on a busy machine, past the
  // deadlines of the pool's (the API's) connections
  const client = new pg.Client({ connectionString: db.url, options: '-c timezone=UTC' });
  await client.connect();
  t.teardown(() => client.end());
  // 3 units, two types, a reading every 20 minutes for four months; one hour of unit 2 has one type only
  await client.query(`
    INSERT INTO sensor_readings (cooling_unit_id, specification_type, recorded_at, value)
    SELECT u, t, at, round((u * 10 + extract(epoch FROM at)::bigint % 97 / 7.0)::numeric, 2)
    FROM generate_series(1, 3) u, unnest(enum_range(NULL::specification_type)) t,
         generate_series('${FROM}'::timestamptz, '${END}'::timestamptz - INTERVAL '20 minutes', INTERVAL '20 minutes') at
    WHERE NOT (u = 2 AND t = 'HUMIDITY' AND at >= '2025-04-10T05:00:00Z' AND at < '2025-04-10T06:00:00Z')`);
  await client.query(`CALL refresh_continuous_aggregate('sensor_readings_hourly', NULL, '${WATERMARK}')`);
  // the materialized chunks in the columnstore, as a year in service leaves them (008)
  await client.query(`
    SELECT compress_chunk(c) FROM show_chunks((
      SELECT format('%I.%I', materialization_hypertable_schema, materialization_hypertable_name)::regclass
      FROM timescaledb_information.continuous_aggregates WHERE view_name = 'sensor_readings_hourly')) c`);
  await client.query('ANALYZE');

  const params = [[2], ['TEMPERATURE', 'HUMIDITY'], FROM, END, null, null, null, 0, 100_000];
  const { rows: planRows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (COSTS OFF) ${hourlyPage}`, params);
  const plan = planRows.map((row) => row['QUERY PLAN']).join('\n');
  t.match(plan, /Incremental Sort[\s\S]*Presorted Key: [^\n]*bucket\n/, 'the page sorts bucket by bucket');
  t.match(
    plan,
    /Merge Append[\s\S]*ChunkAppend\) on _materialized_hypertable_\d+[^\n]*\n\s*Order: [^\n]*bucket\n/,
    'materialized chunks in bucket order',
  );
  // a plain Sort only where it orders a chunk's batches, a chunk, or the real-time hours to group them
  const lines = plan.split('\n');
  const sorted = lines.flatMap((line, i) => (/^\s*(-> +)?Sort$/.test(line) ? [lines[i + 1]!.trim()] : []));
  t.ok(sorted.length > 0, 'the plan has sorts of chunks or the hours above the watermark');
  for (const key of sorted)
    t.match(
      key,
      /^Sort Key: (compress_hyper_\d+_\d+_chunk\._ts_meta|_hyper_\d+_\d+_chunk\.bucket|\(time_bucket\()/,
      `not the whole answer: ${key}`,
    );

  // the rows: those of bucketing the readings, in the page's order, the real-time hours included
  const expected = await client.query<{ at: string; type: string; value: number; min: number; max: number; n: number }>(
    `
    SELECT sensor_timestamp_text(date_trunc('hour', recorded_at)) AS at, specification_type::text AS type,
           avg(value) AS value, min(value) AS min, max(value) AS max, count(*)::int AS n
    FROM sensor_readings WHERE cooling_unit_id = 2 AND recorded_at >= $1 AND recorded_at < $2
    GROUP BY 1, 2, date_trunc('hour', recorded_at) ORDER BY date_trunc('hour', recorded_at), specification_type::text COLLATE "C"`,
    [FROM, END],
  );
  const page = await client.query<{
    timestamp: string;
    specification_type: string;
    value: number;
    min: number;
    max: number;
    sample_count: number;
  }>(hourlyPage, params);
  const rounded = (value: number) => Number(value.toPrecision(12));
  t.equal(page.rows.length, 122 * 24 * 2 - 1, 'every hour of both types, less the hour with one type');
  t.same(
    page.rows.map((row) => [row.timestamp, row.specification_type, rounded(row.value), row.min, row.max, row.sample_count]),
    expected.rows.map((row) => [row.at, row.type, rounded(row.value), row.min, row.max, row.n]),
    'the page: the readings bucketed, in (bucket, unit, type as text) order',
  );
  const { rows: tail } = await client.query<{ hours: number }>(
    `SELECT count(DISTINCT bucket)::int AS hours FROM sensor_readings_hourly WHERE bucket >= $1`,
    [WATERMARK],
  );
  t.equal(tail[0]!.hours, 30, 'the hours above the watermark are there, from the readings');

  // P4's query text (bench/sensor-hourly-aggregates.ts): ordered by the enum, the same rows
  const byEnum = await client.query<{ type: string }>(
    `SELECT bucket, specification_type::text AS type FROM sensor_readings_hourly
     WHERE cooling_unit_id = 2 AND bucket >= $1 AND bucket < $2 ORDER BY bucket, specification_type`,
    [FROM, END],
  );
  t.same(
    byEnum.rows.slice(0, 2).map((row) => row.type),
    ['TEMPERATURE', 'HUMIDITY'],
    'ordered by the enum when asked so',
  );
  t.equal(byEnum.rows.length, page.rows.length, 'the same rows');
});
