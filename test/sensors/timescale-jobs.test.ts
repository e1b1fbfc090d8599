// The timescale profile's TimescaleDB jobs on the real server: the migrations declare the
// aggregate refresh, compression, the aggregates' columnstore (008) and, with
// SENSOR_RETENTION_DAYS, retention policies, scheduled; run with CALL run_job they materialize the
// aggregates into their materialization hypertables, compress the readings' chunks and the
// aggregates' chunks, drop old raw chunks, and GET /api/v1/sensor-data answers the same before
// and after. (The test template pauses these policies, test/helpers/timescale.ts: here the test
// runs them.)
import t, { type Test } from 'tap';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createEmptyDatabase, migrateWithProfile } from '../helpers/db.js';
import { createSensorWorld, NOW, type Page, type SensorWorld } from '../helpers/sensor-world.js';
import { SENSOR_POLICY_PROCS, timescaleServer } from '../helpers/timescale.js';
import pg from 'pg';

interface Job {
  job_id: number;
  proc_name: string;
  hypertable_name: string;
  scheduled: boolean;
  schedule_interval: string;
  config: Record<string, unknown>;
}

const jobsOf = async (db: Pick<pg.Pool, 'query'>) =>
  (
    await db.query<Job>(
      `
  SELECT job_id, proc_name, hypertable_name, scheduled, schedule_interval::text, config
  FROM timescaledb_information.jobs WHERE proc_name = ANY($1) ORDER BY job_id`,
      [SENSOR_POLICY_PROCS],
    )
  ).rows;

t.test('a migration declares the sensor policies, scheduled', async (t) => {
  const { url } = await createEmptyDatabase(t, timescaleServer);
  await migrateWithProfile(url, 'timescale', 30);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.teardown(() => client.end());
  const jobs = await jobsOf(client);
  const byName = (name: string, table: string) => jobs.find((job) => job.proc_name === name && job.hypertable_name === table);
  const shape = (job: Job | undefined) => job && { scheduled: job.scheduled, schedule_interval: job.schedule_interval, config: job.config };
  t.equal(jobs.length, 6, 'six policies');
  t.same(
    shape(byName('policy_refresh_continuous_aggregate', 'sensor_readings_hourly')),
    {
      scheduled: true,
      schedule_interval: '00:15:00',
      config: {
        end_offset: '01:00:00',
        start_offset: '29 days',
        mat_hypertable_id: byName('policy_refresh_continuous_aggregate', 'sensor_readings_hourly')?.config.mat_hypertable_id,
      },
    },
    'hourly refresh every 15 minutes, its window ending a day short of the retention',
  );
  t.same(
    shape(byName('policy_refresh_continuous_aggregate', 'sensor_readings_daily')),
    {
      scheduled: true,
      schedule_interval: '01:00:00',
      config: {
        end_offset: '1 day',
        start_offset: '29 days',
        mat_hypertable_id: byName('policy_refresh_continuous_aggregate', 'sensor_readings_daily')?.config.mat_hypertable_id,
      },
    },
    'daily refresh every hour, the same window',
  );
  t.same(
    shape(byName('policy_compression', 'sensor_readings')),
    {
      scheduled: true,
      schedule_interval: '12:00:00',
      config: { hypertable_id: byName('policy_compression', 'sensor_readings')?.config.hypertable_id, compress_after: '7 days' },
    },
    'compression after 7 days',
  );
  t.same(
    shape(byName('policy_retention', 'sensor_readings')),
    {
      scheduled: true,
      schedule_interval: '1 day',
      config: { hypertable_id: byName('policy_retention', 'sensor_readings')?.config.hypertable_id, drop_after: '30 days' },
    },
    'retention after SENSOR_RETENTION_DAYS',
  );
  for (const view of ['sensor_readings_hourly', 'sensor_readings_daily']) {
    t.same(
      shape(byName('policy_compression', view)),
      {
        scheduled: true,
        schedule_interval: '12:00:00',
        config: { hypertable_id: byName('policy_refresh_continuous_aggregate', view)?.config.mat_hypertable_id, compress_after: '7 days' },
      },
      `${view}: into the columnstore a week after a chunk ends (008)`,
    );
  }
  const { rows: layout } = await client.query<{ view_name: string; interval: string; segmentby: string; orderby: string }>(`
    SELECT a.view_name, d.time_interval::text AS interval,
           string_agg(s.attname, ', ' ORDER BY s.segmentby_column_index) FILTER (WHERE s.segmentby_column_index IS NOT NULL) AS segmentby,
           string_agg(s.attname, ', ' ORDER BY s.orderby_column_index) FILTER (WHERE s.orderby_column_index IS NOT NULL) AS orderby
    FROM timescaledb_information.continuous_aggregates a
    JOIN timescaledb_information.dimensions d ON d.hypertable_name = a.materialization_hypertable_name
    JOIN timescaledb_information.compression_settings s ON s.hypertable_name = a.materialization_hypertable_name
    GROUP BY 1, 2 ORDER BY 1 DESC`);
  t.same(
    layout,
    [
      { view_name: 'sensor_readings_hourly', interval: '30 days', segmentby: 'cooling_unit_id, specification_type', orderby: 'bucket' },
      { view_name: 'sensor_readings_daily', interval: '90 days', segmentby: 'cooling_unit_id, specification_type', orderby: 'bucket' },
    ],
    "the aggregates' layout: 30- and 90-day chunks, segmented by unit and type, ordered by bucket",
  );
  const {
    rows: [storage],
  } = await client.query<{ profile: string; retention: string }>('SELECT profile, retention::text FROM sensor_storage');
  t.same(storage, { profile: 'timescale', retention: '30 days' });
});

/** Every record of a query, page after page (1000 a page), through a fresh app: no cached counts or boundaries. */
async function history(world: SensorWorld, t: Test, queries: string[]): Promise<Record<string, Page['data']>> {
  const ctx: TestApp = await createTestApp(t, {}, { database: world.db });
  ctx.clock.set(NOW);
  const result: Record<string, Page['data']> = {};
  for (const query of queries) {
    const records: Page['data'] = [];
    for (let page = 1; ; page++) {
      const response = await ctx.app.inject({
        method: 'GET',
        url: `/api/v1/sensor-data?${query}&page_size=1000&page=${page}`,
        headers: world.all.headers,
      });
      if (response.statusCode !== 200) throw new Error(`${query}: ${response.statusCode} ${response.body}`);
      const body = response.json<Page>();
      records.push(...body.data);
      if (!body.meta.pagination.has_next) break;
    }
    result[query] = records;
  }
  return result;
}

const QUERIES = [
  'start_date=2026-03-01&end_date=2026-03-15',
  'aggregation=hourly&start_date=2026-03-01&end_date=2026-03-15',
  'aggregation=daily&start_date=2026-01-01&end_date=2026-03-31',
  'aggregation=hourly&specification_type=HUMIDITY&start_date=2026-03-14&end_date=2026-03-15',
];

t.test('the policies run with run_job: aggregates materialized, chunks compressed, the same history', async (t) => {
  const world = await createSensorWorld(t, 'timescale');
  const { db, one, a1, load, consistent } = world;
  const jobs = await jobsOf(db.pool);
  const refreshOf = (view: string) =>
    jobs.find((job) => job.proc_name === 'policy_refresh_continuous_aggregate' && job.hypertable_name === view);
  const hourlyJob = refreshOf('sensor_readings_hourly');
  const dailyJob = refreshOf('sensor_readings_daily');
  const compressionJob = jobs.find((job) => job.proc_name === 'policy_compression' && job.hypertable_name === 'sensor_readings');
  const columnstoreJobs = jobs.filter((job) => job.proc_name === 'policy_compression' && job.hypertable_name !== 'sensor_readings');
  t.ok(hourlyJob && dailyJob && compressionJob, 'the refresh and compression policies are in timescaledb_information.jobs');
  t.same(
    columnstoreJobs.map((job) => job.hypertable_name).sort(),
    ['sensor_readings_daily', 'sensor_readings_hourly'],
    "and the aggregates' columnstore policies",
  );
  t.same(
    jobs.map((job) => job.scheduled),
    [false, false, false, false, false],
    'paused in the test template: they run only when the test runs them',
  );
  const { rows: aggregates } = await db.pool.query<{ view_name: string; mat: string }>(`
    SELECT view_name, format('%I.%I', materialization_hypertable_schema, materialization_hypertable_name) AS mat
    FROM timescaledb_information.continuous_aggregates ORDER BY view_name`);
  const mat = Object.fromEntries(aggregates.map((row) => [row.view_name, row.mat]));
  t.same(Object.keys(mat), ['sensor_readings_daily', 'sensor_readings_hourly']);

  const materialized = async (view: string) =>
    one<{ rows: number; since_14th: number; view_rows: number }>(`
    SELECT (SELECT count(*) FROM ${mat[view]})::int AS rows,
           (SELECT count(*) FROM ${mat[view]} WHERE bucket >= '2026-03-14T00:00:00Z')::int AS since_14th,
           (SELECT count(*) FROM ${view})::int AS view_rows`);
  const chunks = () =>
    one<{ chunks: number; compressed: number }>(`
    SELECT count(*)::int AS chunks, (count(*) FILTER (WHERE is_compressed))::int AS compressed
    FROM timescaledb_information.chunks WHERE hypertable_name = 'sensor_readings'`);
  const watermark = (view: string) =>
    one<{ at: string }>(
      `
    SELECT _timescaledb_functions.to_timestamp(_timescaledb_functions.cagg_watermark(mat_hypertable_id))::text AS at
    FROM _timescaledb_catalog.continuous_agg WHERE user_view_name = $1`,
      [view],
    );

  const before = await history(world, t, QUERIES);
  t.ok(before[QUERIES[0]!]!.length > 5000 && before[QUERIES[1]!]!.length > 1000, 'a history to compare');

  // the world materialized both aggregates up to March 14th (what the policies would have done
  // by the app's clock); the server's clock is in the future of every reading
  const hourlyBefore = await materialized('sensor_readings_hourly');
  const dailyBefore = await materialized('sensor_readings_daily');
  t.equal(hourlyBefore.since_14th, 0, 'hourly: nothing materialized from March 14th on');
  t.ok(hourlyBefore.rows > 0 && hourlyBefore.rows < hourlyBefore.view_rows, 'hourly: the rest is real-time');
  t.equal(dailyBefore.since_14th, 0, 'daily: nothing materialized from March 14th on');
  t.same(await chunks(), { chunks: 11, compressed: 0 }, 'eleven one-day chunks, none compressed');

  await db.pool.query('CALL run_job($1)', [hourlyJob!.job_id]);
  const hourlyAfter = await materialized('sensor_readings_hourly');
  t.ok(hourlyAfter.since_14th > 0, `hourly refresh: ${hourlyAfter.since_14th} rows materialized from March 14th on`);
  t.equal(hourlyAfter.rows, hourlyAfter.view_rows, 'hourly refresh: every hourly row is materialized');
  t.equal((await watermark('sensor_readings_hourly')).at, '2026-03-15 12:00:00+00', 'hourly watermark: after the last hour with readings');

  await db.pool.query('CALL run_job($1)', [dailyJob!.job_id]);
  const dailyAfter = await materialized('sensor_readings_daily');
  t.ok(dailyAfter.since_14th > 0, `daily refresh: ${dailyAfter.since_14th} rows materialized from March 14th on`);
  t.equal(dailyAfter.since_14th, 12, 'daily refresh: the 14th and the 15th so far, 3 units x 2 types each');
  t.equal(dailyAfter.rows, dailyAfter.view_rows, 'daily refresh: every daily row is materialized');
  t.equal((await watermark('sensor_readings_daily')).at, '2026-03-16 00:00:00+00', 'daily watermark: after the last day with readings');

  await db.pool.query('CALL run_job($1)', [compressionJob!.job_id]);
  t.same(await chunks(), { chunks: 11, compressed: 11 }, "compression: every chunk (all over seven days old by the server's clock)");
  const stats = await one<{ chunks: number }>(`
    SELECT count(*)::int AS chunks FROM chunk_compression_stats('sensor_readings') WHERE compression_status = 'Compressed'`);
  t.equal(stats.chunks, 11, 'chunk_compression_stats: eleven compressed chunks');

  // the aggregates' columnstore (008): their chunks too are over a week past their end by the
  // server's clock
  const aggregateChunks = (view: string) =>
    one<{ chunks: number; compressed: number }>(
      `
    SELECT count(*)::int AS chunks, (count(*) FILTER (WHERE is_compressed))::int AS compressed
    FROM timescaledb_information.chunks c JOIN timescaledb_information.continuous_aggregates a
      ON c.hypertable_schema = a.materialization_hypertable_schema AND c.hypertable_name = a.materialization_hypertable_name
    WHERE a.view_name = $1`,
      [view],
    );
  for (const job of columnstoreJobs) await db.pool.query('CALL run_job($1)', [job.job_id]);
  for (const view of ['sensor_readings_hourly', 'sensor_readings_daily']) {
    const { chunks, compressed } = await aggregateChunks(view);
    t.ok(chunks > 0 && compressed === chunks, `${view}: every chunk in the columnstore (${compressed} of ${chunks})`);
  }

  t.same(await history(world, t, QUERIES), before, 'GET /api/v1/sensor-data: the same records after the jobs ran');
  await consistent(t, 'after the jobs');

  // a late reading and a duplicate into a compressed, materialized chunk (the readings' and both
  // aggregates': the refresh rewrites the hour and the day inside the columnstore)
  const hourOf = () =>
    one<{ sample_count: number; max: number }>(
      `SELECT sample_count, max FROM sensor_readings_hourly
    WHERE cooling_unit_id = $1 AND specification_type = 'TEMPERATURE' AND bucket = '2026-03-08T04:00:00Z'`,
      [a1],
    );
  t.same(await hourOf(), { sample_count: 4, max: (await hourOf()).max });
  const late = `cooling_unit_id,specification_type,recorded_at,value\n${a1},TEMPERATURE,2026-03-08T04:20:00Z,99\n${a1},TEMPERATURE,2026-03-08T04:15:00Z,98\n`;
  t.match(await load(late), { inserted: 1, duplicates: 1 }, 'into a compressed chunk: the new reading loads, the duplicate is found');
  t.same(await hourOf(), { sample_count: 5, max: 99 }, 'and counts at once in its materialized hour');
  await consistent(t, 'after a late reading into a compressed chunk');

  for (const job of [hourlyJob!, dailyJob!, compressionJob!, ...columnstoreJobs]) await db.pool.query('CALL run_job($1)', [job.job_id]);
  await consistent(t, 'after the jobs ran again');
  for (const view of ['sensor_readings_hourly', 'sensor_readings_daily']) {
    const { chunks, compressed } = await aggregateChunks(view);
    t.equal(compressed, chunks, `${view}: still in the columnstore after the late reading`);
  }
  t.same(await hourOf(), { sample_count: 5, max: 99 }, 'the late reading still counted');
});

t.test('retention: raw chunks past it are dropped, the aggregates keep their history', async (t) => {
  const world = await createSensorWorld(t, 'timescale');
  const { db, one } = world;
  // the policies are re-declared by the retention: look them up at each run
  const refreshAll = async () => {
    const refresh = (await jobsOf(db.pool)).filter((job) => job.proc_name === 'policy_refresh_continuous_aggregate');
    t.equal(refresh.length, 2, 'two refresh policies');
    for (const job of refresh) await db.pool.query('CALL run_job($1)', [job.job_id]);
  };
  await refreshAll();
  const aggregated = QUERIES.filter((query) => query.startsWith('aggregation='));
  const before = await history(world, t, aggregated);
  // what SENSOR_RETENTION_DAYS=30 declares (the template has none): by the server's clock, every
  // chunk is older than that
  await db.pool.query('SELECT sensor_timescale_retention(30)');
  const retentionJob = (await jobsOf(db.pool)).find((job) => job.proc_name === 'policy_retention');
  await db.pool.query('CALL run_job($1)', [retentionJob!.job_id]);
  t.same(await one('SELECT count(*)::int AS n FROM sensor_readings'), { n: 0 }, 'the raw readings are gone');
  const after = await history(world, t, aggregated);
  for (const query of aggregated) t.same(after[query], before[query], `${query}: the same records`);

  // TimescaleDB logs the dropped chunks' ranges as invalidations; a refresh over them would
  // re-materialize those buckets from raw readings that are gone. With retention, the refresh
  // windows end a day short of it (sql/migrations/004): the policies run again, history stays.
  await refreshAll();
  const later = await history(world, t, aggregated);
  // records and readings behind them, not the records (a failure would diff thousands of lines)
  const summary = (records: Page['data']) => ({
    records: records.length,
    readings: records.reduce((sum, r) => sum + (r.sample_count as number), 0),
  });
  for (const query of aggregated) {
    t.same(summary(later[query]!), summary(before[query]!), `${query}: the same records after the refresh policies ran again`);
  }
});
