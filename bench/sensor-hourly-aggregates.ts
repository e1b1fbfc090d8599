// Benchmark (a), P4: a year of one unit's hourly history from the aggregate against its floor, the
// same 17,520 rows from a plain table of exactly them (same query through COPY, same route):
// <= 1.3x on both profiles; on postgres also >= 10x faster than bucketing raw readings
// (date_trunc + GROUP BY). Other units' readings share the table, as in production. Timed: the
// database producing and sending the rows (COPY ... TO STDOUT), not node-pg's parsing, which costs
// both the same and only blurs the ratio. timescale also shows the moment before the readings'
// compression. The floor through the route: the plain table is named sensor_readings_hourly in a
// schema of its own (p4_floor) that a second app's connections put first on their search_path, so
// the same route, SQL text and serializer answer both; the two apps alternate, round by round.
//   node --import tsx bench/sensor-hourly-aggregates.ts [--quick] [--profile postgres|timescale]
import type pg from 'pg';
import { createPool } from '../src/db/pool.js';
import * as script from './kit/sensor-script.js';
import { fixed } from './kit/statistics.js';

const UNITS = script.quick ? 40 : 100;
const DAYS = 365;
const ROUNDS = script.quick ? 9 : 15;
const FROM = new Date(script.END.getTime() - DAYS * 86_400_000).toISOString();
const END = script.END.toISOString();
/** the year's last day, as the route's inclusive end_date */
const LAST_DAY = new Date(script.END.getTime() - 86_400_000).toISOString().slice(0, 10);
/** aggregates / floor, both profiles */
const FLOOR_TARGET = 1.3;
/** raw bucketing / aggregates, postgres */
const RAW_TARGET = 10;
const FLOOR_SCHEMA = 'p4_floor';
const PAGE_SIZE = 1000;

const aggregate = (unit: number, from = 'sensor_readings_hourly') => `
  SELECT bucket, cooling_unit_id, specification_type, value, min, max, sample_count
  FROM ${from}
  WHERE cooling_unit_id = ${unit} AND bucket >= '${FROM}' AND bucket < '${END}'
  ORDER BY bucket, specification_type`;
const fromRaw = (unit: number) => `
  SELECT date_trunc('hour', recorded_at) AS bucket, cooling_unit_id, specification_type,
         avg(value) AS value, min(value) AS min, max(value) AS max, count(*)::int AS sample_count
  FROM sensor_readings
  WHERE cooling_unit_id = ${unit} AND recorded_at >= '${FROM}' AND recorded_at < '${END}'
  GROUP BY 1, 2, 3
  ORDER BY 1, 3`;

const P4 = {
  key: 'P4',
  name:
    `hourly year of 1 unit from the aggregates vs the floor (target <= ${FLOOR_TARGET}x, COPY and route)` +
    (script.profile === 'postgres' ? ` and vs raw bucketing (target >= ${RAW_TARGET}x)` : ''),
};

/** The floor: the unit's hourly rows of the year copied from the aggregate into a plain table, in the route's order, with its index. */
async function createFloorTable(pool: pg.Pool, unit: number): Promise<void> {
  await pool.query(`
    DROP SCHEMA IF EXISTS ${FLOOR_SCHEMA} CASCADE;
    CREATE SCHEMA ${FLOOR_SCHEMA};
    CREATE TABLE ${FLOOR_SCHEMA}.sensor_readings_hourly AS
      SELECT bucket, cooling_unit_id, specification_type, value, min, max, sample_count
      FROM public.sensor_readings_hourly
      WHERE cooling_unit_id = ${unit} AND bucket >= '${FROM}' AND bucket < '${END}'
      ORDER BY bucket, cooling_unit_id, specification_type;
    CREATE INDEX ON ${FLOOR_SCHEMA}.sensor_readings_hourly (cooling_unit_id, bucket, specification_type);
    ANALYZE ${FLOOR_SCHEMA}.sensor_readings_hourly;`);
}

/**
 * ROUNDS alternating rounds of both queries, three ways each (COPY, node-pg rows, EXPLAIN ANALYZE),
 * and the floor by COPY. timescale also times the same query text on the hourly aggregate's
 * materialization hypertable, the rows the view's materialized branch reads without the real-time
 * branch beside it: what is left between it and the floor is the columnstore's own cost.
 */
async function measure(db: script.BenchDatabase, unit: number) {
  const [aggregateRows, rawRows] = await Promise.all([db.pool.query(aggregate(unit)), db.pool.query(fromRaw(unit))]);
  if (aggregateRows.rowCount !== rawRows.rowCount) throw new Error(`row counts differ: ${aggregateRows.rowCount} vs ${rawRows.rowCount}`);
  // the floor: the answer's rows in a plain table of their own, read by the same query text
  await createFloorTable(db.pool, unit);
  const materialization = await materializationTable(db);
  const sql = {
    aggregate: aggregate(unit),
    raw: fromRaw(unit),
    floor: aggregate(unit, `${FLOOR_SCHEMA}.sensor_readings_hourly`),
    materialized: materialization && aggregate(unit, materialization),
  };
  const copied = async (statement: string) => {
    const client = await db.pool.connect();
    try {
      return (await script.copyOut(client, `COPY (${statement}) TO STDOUT`)).out;
    } finally {
      client.release();
    }
  };
  // the database's own execution time, rows produced but not formatted or sent
  const executed = async (statement: string) => {
    const { rows: plan } = await db.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, TIMING OFF) ${statement}`);
    return Number(/Execution Time: ([\d.]+) ms/.exec(plan.map((row) => row['QUERY PLAN']).join('\n'))?.[1] ?? NaN);
  };
  const kinds = ['floor', 'aggregate', 'materialized', 'raw', 'aggregateParsed', 'rawParsed', 'aggregateServer', 'rawServer'] as const;
  const times = Object.fromEntries(kinds.map((kind) => [kind, [] as number[]])) as Record<(typeof kinds)[number], number[]>;
  let bytes = 0;
  for (let round = 0; round < ROUNDS; round++) {
    // the floor before or after the aggregate in turn: the pair P4 is judged on alternates
    if (round % 2 === 1) times.floor.push(await script.msOf(() => copied(sql.floor)));
    times.aggregate.push(await script.msOf(async () => (bytes = await copied(sql.aggregate))));
    if (round % 2 === 0) times.floor.push(await script.msOf(() => copied(sql.floor)));
    if (sql.materialized) {
      let sent = 0;
      times.materialized.push(await script.msOf(async () => (sent = await copied(sql.materialized!))));
      // the whole year is below the watermark, so both read the same rows: a check, not an assumption
      if (sent !== bytes) throw new Error(`the materialization hypertable sent ${sent} bytes, the view ${bytes}`);
    }
    times.raw.push(await script.msOf(() => copied(sql.raw)));
    times.aggregateParsed.push(await script.msOf(() => db.pool.query(sql.aggregate)));
    times.rawParsed.push(await script.msOf(() => db.pool.query(sql.raw)));
    times.aggregateServer.push(await executed(sql.aggregate));
    times.rawServer.push(await executed(sql.raw));
  }
  const ms = script.medians(times);
  return {
    rows: aggregateRows.rowCount ?? 0,
    bytes,
    ms,
    materialized: sql.materialized !== null,
    plan: await explained(db, sql.aggregate),
  };
}
type Figures = Awaited<ReturnType<typeof measure>>;

/** timescale: the hourly aggregate's materialization hypertable, schema-qualified; null on postgres. */
async function materializationTable(db: script.BenchDatabase): Promise<string | null> {
  if (db.profile !== 'timescale') return null;
  const { rows } = await db.pool.query<{ name: string }>(`
    SELECT format('%I.%I', materialization_hypertable_schema, materialization_hypertable_name) AS name
    FROM timescaledb_information.continuous_aggregates WHERE view_name = 'sensor_readings_hourly'`);
  return rows[0]?.name ?? null;
}

/** EXPLAIN (ANALYZE, BUFFERS) five times on one warm connection: median planning/execution time and buffers. */
async function explained(db: script.BenchDatabase, sql: string) {
  const client = await db.pool.connect();
  const plan = {
    planningMs: [] as number[],
    planningBuffers: [] as number[],
    executionMs: [] as number[],
    buffers: [] as number[],
    chunks: [] as number[],
  };
  try {
    for (let i = 0; i < 5; i++) {
      const { rows } = await client.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`);
      const [top] = rows[0]!['QUERY PLAN'] as [
        { Plan: Record<string, unknown>; Planning: Record<string, number>; 'Planning Time': number; 'Execution Time': number },
      ];
      plan.planningMs.push(top['Planning Time']);
      plan.planningBuffers.push((top.Planning?.['Shared Hit Blocks'] ?? 0) + (top.Planning?.['Shared Read Blocks'] ?? 0));
      plan.executionMs.push(top['Execution Time']);
      plan.buffers.push((Number(top.Plan['Shared Hit Blocks']) || 0) + (Number(top.Plan['Shared Read Blocks']) || 0));
      plan.chunks.push(new Set(JSON.stringify(top.Plan).match(/"Relation Name":"_hyper_\d+_\d+_chunk"/g) ?? []).size);
    }
  } finally {
    client.release();
  }
  return script.medians(plan);
}

function print({ rows, bytes, ms, materialized, plan }: Figures) {
  console.log(`${rows} rows (${Math.round(bytes / 1024)} KiB) each way; median of ${ROUNDS} alternating rounds:`);
  console.log(`  from sensor_readings_hourly:             ${fixed(ms.aggregate, 2)} ms`);
  console.log(`  date_trunc + GROUP BY over the readings: ${fixed(ms.raw, 2)} ms`);
  console.log(`  the floor, the same query on a plain table of exactly these rows: ${fixed(ms.floor, 2)} ms`);
  console.log(
    `  aggregates / floor: ${fixed(ms.aggregate / ms.floor, 2)}x; raw / aggregates: ${fixed(ms.raw / ms.aggregate)}x (at most ${fixed(ms.raw / ms.floor)}x here)`,
  );
  if (materialized)
    console.log(
      `  the same query on the aggregate's materialization hypertable, without the real-time branch: ` +
        `${fixed(ms.materialized, 2)} ms, ${fixed(ms.materialized / ms.floor, 2)}x the floor`,
    );
  console.log(
    `  (as node-pg row objects: ${fixed(ms.aggregateParsed, 1)} ms vs ${fixed(ms.rawParsed, 1)} ms, ` +
      `${fixed(ms.rawParsed / ms.aggregateParsed)}x: client-side parsing of the same ${rows} rows adds the same to both)`,
  );
  console.log(
    `  (server execution only, EXPLAIN ANALYZE: ${fixed(ms.aggregateServer, 1)} ms vs ` +
      `${fixed(ms.rawServer, 1)} ms, ${fixed(ms.rawServer / ms.aggregateServer)}x: formatting and sending the same rows is the rest)`,
  );
  console.log(
    `  the aggregate query, EXPLAIN (ANALYZE, BUFFERS) warm: planning ${fixed(plan.planningMs, 2)} ms (${plan.planningBuffers} buffers), ` +
      `execution ${fixed(plan.executionMs, 2)} ms (${plan.buffers} buffers)${plan.chunks ? `, ${plan.chunks} chunks read` : ''}`,
  );
}

/**
 * The floor through the route: the year of `unit` hourly, read page after page through
 * GET /api/v1/sensor-data?aggregation=hourly from the aggregates and from the floor's table, in
 * ROUNDS alternating walks (warm: every page after the first finds its boundary cached).
 */
async function measureRoute(db: script.BenchDatabase, company: script.BenchCompany, unit: number) {
  const floorPool = createPool(db.url, 4);
  // the same statements, resolved against the floor's table first: a session setting of every
  // connection from its start (the pool hands these options to each client it opens)
  const settings = (floorPool as pg.Pool & { options: pg.PoolConfig }).options;
  settings.options = `${settings.options ?? ''} -c search_path=${FLOOR_SCHEMA},public`.trim();
  db.atDrop(() => floorPool.end());
  const apps = {
    aggregate: await script.startBenchApp(db, company),
    floor: await script.startBenchApp({ ...db, pool: floorPool }, company),
  };
  db.atDrop(() => Promise.all([apps.aggregate.app.close(), apps.floor.app.close()]));
  const query = `cooling_unit_id=${unit}&start_date=${FROM.slice(0, 10)}&end_date=${LAST_DAY}&aggregation=hourly&page_size=${PAGE_SIZE}`;
  const walk = async ({ app, headers }: (typeof apps)['floor']) => {
    let [records, pages] = [0, 0];
    for (let page = 1; ; page++) {
      const response = await app.inject({ method: 'GET', url: `/api/v1/sensor-data?${query}&page=${page}`, headers });
      if (response.statusCode !== 200) throw new Error(`page ${page}: ${response.statusCode} ${response.body.slice(0, 200)}`);
      const { data } = response.json() as { data: unknown[] };
      [records, pages] = [records + data.length, pages + 1];
      if (data.length < PAGE_SIZE) return { records, pages };
    }
  };
  // both warm first (caches, prepared statements, buffers), and the same answer from both
  const [fromAggregate, fromFloor] = [await walk(apps.aggregate), await walk(apps.floor)];
  if (fromAggregate.records !== fromFloor.records) {
    throw new Error(`the floor answered ${fromFloor.records} records, the aggregates ${fromAggregate.records}`);
  }
  const ms = script.medians(await script.alternate(ROUNDS, ['aggregate', 'floor'] as const, (side) => script.msOf(() => walk(apps[side]))));
  console.log(
    `through the route (GET /api/v1/sensor-data?aggregation=hourly, ${fromAggregate.pages} pages of up to 1,000, warm), median of ${ROUNDS} alternating walks:`,
  );
  console.log(`  from the aggregates: ${fixed(ms.aggregate, 1)} ms; from a plain table of the same rows: ${fixed(ms.floor, 1)} ms`);
  console.log(`  aggregates / floor: ${fixed(ms.aggregate / ms.floor, 2)}x`);
  return { ...fromAggregate, ...ms, ratio: ms.aggregate / ms.floor };
}

const title = `sensor benchmark (a): hourly history of one unit over ${DAYS} days, aggregates vs floor and raw`;
await script.run({ title, label: 'hourly', poolSize: 4, targets: [P4] }, async (db) => {
  const { company, readings } = await script.companyWithReadings(db, UNITS, DAYS, script.END);
  const unit = Math.ceil(UNITS / 2);
  const upkeepAt = new Date(script.END.getTime() + 4 * 86_400_000);

  // timescale: first the aggregates as the policies leave them, the readings' chunks not yet compressed
  let rowStore: Figures | null = null;
  if (script.profile === 'timescale') {
    const aggregates = await script.upkeepAfter(db, upkeepAt, [
      'refresh hourly',
      'refresh daily',
      'columnstore hourly',
      'columnstore daily',
    ]);
    console.log(
      `policies run (${aggregates.steps.join(', ')}) and VACUUM ANALYZE: ${fixed(aggregates.seconds)} s; ${await script.aggregateLayout(db.pool)}`,
    );
    console.log("before the readings' compression (the week after a chunk ends, or a store without that policy):");
    rowStore = await measure(db, unit);
    print(rowStore);
  }
  // what the store's upkeep has done after a year in service (postgres: the aggregate tables' closed months
  // compacted; timescale: the readings' chunks compressed too)
  const upkeep = await script.upkeepAfter(db, upkeepAt);
  console.log(
    `upkeep over the loaded year (${upkeep.steps.join(', ') || 'nothing left to run'}; VACUUM ANALYZE): ${fixed(upkeep.seconds)} s`,
  );
  if (script.profile === 'timescale') console.log(`after a year in service, the readings' chunks compressed too:`);
  const figures = await measure(db, unit);
  print(figures);
  const route = await measureRoute(db, company, unit);
  const { ms, plan } = figures;
  const extra = rowStore
    ? `; with the readings' chunks not yet compressed: floor ${fixed(rowStore.ms.aggregate / rowStore.ms.floor, 2)}x, raw ${fixed(rowStore.ms.raw / rowStore.ms.aggregate)}x`
    : '';
  const withoutUnion = figures.materialized
    ? `; without the view's real-time branch ${fixed(ms.materialized / ms.floor, 2)}x the floor by COPY`
    : '';
  const [copyRatio, rawRatio] = [ms.aggregate / ms.floor, ms.raw / ms.aggregate];
  const rawCounts = script.profile === 'postgres';
  return [
    {
      ...P4,
      pass: copyRatio <= FLOOR_TARGET && route.ratio <= FLOOR_TARGET && (!rawCounts || rawRatio >= RAW_TARGET),
      measured:
        `floor ${fixed(copyRatio, 2)}x by COPY (${fixed(ms.aggregate, 2)} vs ${fixed(ms.floor, 2)} ms), ` +
        `${fixed(route.ratio, 2)}x through the route (${fixed(route.aggregate, 1)} vs ${fixed(route.floor, 1)} ms); ` +
        `raw bucketing ${fixed(rawRatio)}x${rawCounts ? '' : ' (not a target on timescale)'}`,
      ratio: Math.max(copyRatio, route.ratio),
      detail:
        `median of ${ROUNDS} alternating rounds; ${figures.rows} rows via COPY TO STDOUT, ${route.records} records in ${route.pages} pages through the route; ` +
        `raw bucketing ${fixed(ms.raw, 1)} ms; as node-pg rows ${fixed(ms.rawParsed / ms.aggregateParsed)}x; server execution ${fixed(ms.rawServer / ms.aggregateServer)}x; ` +
        `aggregate query planning ${fixed(plan.planningMs, 1)} ms + execution ${fixed(plan.executionMs, 1)} ms, ${plan.buffers} buffers${plan.chunks ? ` in ${plan.chunks} chunks` : ''}; ` +
        `${readings} readings of ${UNITS} units in the table; ${script.profile} profile${withoutUnion}${extra}`,
    },
  ];
});
