// Benchmark (a), P4: a year of one unit's hourly history from the aggregate against its floor, the
// same 17,520 rows from a plain table of exactly them (same query through COPY, same route:
// sensor-hourly-floor.ts): <= 1.3x on both profiles; on postgres also >= 10x faster than bucketing
// raw readings (date_trunc + GROUP BY). Other units' readings share the table, as in production.
// Timed: the database producing and sending the rows (COPY ... TO STDOUT), not node-pg's parsing,
// which costs both the same and only blurs the ratio. timescale also shows the moment before the
// readings' compression.
//   node --import tsx bench/sensor-hourly-aggregates.ts [--quick] [--profile postgres|timescale]
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { to as copyTo } from 'pg-copy-streams';
import { createFloorTable, FLOOR_SCHEMA, measureRouteYear, type RouteYear } from './sensor-hourly-floor.js';
import * as script from './kit/sensor-script.js';
import { fixed, median, timed } from './kit/statistics.js';

const UNITS = script.quick ? 40 : 100;
const DAYS = 365;
const ROUNDS = script.quick ? 9 : 15;
const FROM = new Date(script.END.getTime() - DAYS * 86_400_000).toISOString();
/** the year's last day, as the route's inclusive end_date */
const LAST_DAY = new Date(script.END.getTime() - 86_400_000).toISOString().slice(0, 10);
/** aggregates / floor, both profiles */
const FLOOR_TARGET = 1.3;
/** raw bucketing / aggregates, postgres */
const RAW_TARGET = 10;

const aggregate = (unit: number) => `
  SELECT bucket, cooling_unit_id, specification_type, value, min, max, sample_count
  FROM sensor_readings_hourly
  WHERE cooling_unit_id = ${unit} AND bucket >= '${FROM}' AND bucket < '${script.END.toISOString()}'
  ORDER BY bucket, specification_type`;
const fromRaw = (unit: number) => `
  SELECT date_trunc('hour', recorded_at) AS bucket, cooling_unit_id, specification_type,
         avg(value) AS value, min(value) AS min, max(value) AS max, count(*)::int AS sample_count
  FROM sensor_readings
  WHERE cooling_unit_id = ${unit} AND recorded_at >= '${FROM}' AND recorded_at < '${script.END.toISOString()}'
  GROUP BY 1, 2, 3
  ORDER BY 1, 3`;

const P4 = {
  key: 'P4',
  name:
    `hourly year of 1 unit from the aggregates vs the floor (target <= ${FLOOR_TARGET}x, COPY and route)` +
    (script.profile === 'postgres' ? ` and vs raw bucketing (target >= ${RAW_TARGET}x)` : ''),
};

interface Figures {
  rows: number;
  bytes: number;
  aggregateMs: number;
  rawMs: number;
  ratio: number;
  /** the same rows from a plain table holding exactly them: what formatting and sending them costs */
  floorMs: number;
  parsedRatio: number;
  aggregateParsedMs: number;
  rawParsedMs: number;
  aggregateServerMs: number;
  rawServerMs: number;
  serverRatio: number;
  /**
   * timescale: the same query text on the hourly aggregate's materialization hypertable, the
   * rows the view's materialized branch reads without the real-time branch beside it. The view is
   * a UNION ALL of the two, which keeps TimescaleDB from reading the chunks in bucket order
   * (ordered append), so the view sorts the whole year above them; the hypertable alone sorts
   * chunk by chunk. What is left between this and the floor is the columnstore's own cost.
   */
  materializedMs: number | null;
  /** the aggregate query's EXPLAIN (ANALYZE, BUFFERS), warm: median planning and execution */
  plan: { planningMs: number; planningBuffers: number; executionMs: number; buffers: number; chunks: number };
}

/** ROUNDS alternating rounds of both queries, three ways each (COPY, node-pg rows, EXPLAIN ANALYZE). */
async function measure(db: script.BenchDatabase, unit: number): Promise<Figures> {
  const copied = async (sql: string) => {
    const client = await db.pool.connect();
    let bytes = 0;
    try {
      await pipeline(
        client.query(copyTo(`COPY (${sql}) TO STDOUT`)),
        new Writable({
          write(chunk: Buffer, _encoding, done) {
            bytes += chunk.length;
            done();
          },
        }),
      );
    } finally {
      client.release();
    }
    return bytes;
  };
  const [aggregateRows, rawRows] = await Promise.all([db.pool.query(aggregate(unit)), db.pool.query(fromRaw(unit))]);
  if (aggregateRows.rowCount !== rawRows.rowCount) throw new Error(`row counts differ: ${aggregateRows.rowCount} vs ${rawRows.rowCount}`);
  const rows = aggregateRows.rowCount ?? 0;
  // the floor: the answer's rows in a plain table of their own, read by the same query text
  await createFloorTable(db.pool, unit, FROM, script.END.toISOString());
  const floor = aggregate(unit).replace('FROM sensor_readings_hourly', `FROM ${FLOOR_SCHEMA}.sensor_readings_hourly`);
  const materializationTable = await materialization(db);
  const materialized = materializationTable && aggregate(unit).replace('FROM sensor_readings_hourly', `FROM ${materializationTable}`);

  // the database's own execution time, rows produced but not formatted or sent
  const executed = async (sql: string) => {
    const { rows: plan } = await db.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, TIMING OFF) ${sql}`);
    return Number(/Execution Time: ([\d.]+) ms/.exec(plan.map((row) => row['QUERY PLAN']).join('\n'))?.[1] ?? NaN);
  };
  const times = {
    floor: [] as number[],
    aggregate: [] as number[],
    materialized: [] as number[],
    raw: [] as number[],
    aggregateParsed: [] as number[],
    rawParsed: [] as number[],
    aggregateServer: [] as number[],
    rawServer: [] as number[],
  };
  let bytes = 0;
  for (let round = 0; round < ROUNDS; round++) {
    // the floor before or after the aggregate in turn: the pair P4 is judged on alternates
    if (round % 2 === 1) times.floor.push((await timed(() => copied(floor))).ms);
    const a = await timed(() => copied(aggregate(unit)));
    times.aggregate.push(a.ms);
    bytes = a.result;
    if (round % 2 === 0) times.floor.push((await timed(() => copied(floor))).ms);
    if (materialized) {
      const m = await timed(() => copied(materialized));
      // the whole year is below the watermark, so both read the same rows: a check, not an assumption
      if (m.result !== a.result) throw new Error(`the materialization hypertable sent ${m.result} bytes, the view ${a.result}`);
      times.materialized.push(m.ms);
    }
    times.raw.push((await timed(() => copied(fromRaw(unit)))).ms);
    times.aggregateParsed.push((await timed(() => db.pool.query(aggregate(unit)))).ms);
    times.rawParsed.push((await timed(() => db.pool.query(fromRaw(unit)))).ms);
    times.aggregateServer.push(await executed(aggregate(unit)));
    times.rawServer.push(await executed(fromRaw(unit)));
  }
  const [aggregateMs, rawMs] = [median(times.aggregate), median(times.raw)];
  return {
    rows,
    bytes,
    aggregateMs,
    rawMs,
    ratio: rawMs / aggregateMs,
    floorMs: median(times.floor),
    materializedMs: materialized ? median(times.materialized) : null,
    aggregateParsedMs: median(times.aggregateParsed),
    rawParsedMs: median(times.rawParsed),
    parsedRatio: median(times.rawParsed) / median(times.aggregateParsed),
    aggregateServerMs: median(times.aggregateServer),
    rawServerMs: median(times.rawServer),
    serverRatio: median(times.rawServer) / median(times.aggregateServer),
    plan: await explained(db, aggregate(unit)),
  };
}

/** timescale: the hourly aggregate's materialization hypertable, schema-qualified; null on postgres. */
async function materialization(db: script.BenchDatabase): Promise<string | null> {
  if (db.profile !== 'timescale') return null;
  const { rows } = await db.pool.query<{ name: string }>(`
    SELECT format('%I.%I', materialization_hypertable_schema, materialization_hypertable_name) AS name
    FROM timescaledb_information.continuous_aggregates WHERE view_name = 'sensor_readings_hourly'`);
  return rows[0]?.name ?? null;
}

/** EXPLAIN (ANALYZE, BUFFERS) five times on one warm connection: median planning/execution time and buffers. */
async function explained(db: script.BenchDatabase, sql: string): Promise<Figures['plan']> {
  const client = await db.pool.connect();
  const runs: Figures['plan'][] = [];
  try {
    for (let i = 0; i < 5; i++) {
      const { rows } = await client.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`);
      const [top] = rows[0]!['QUERY PLAN'] as [
        { Plan: Record<string, unknown>; Planning: Record<string, number>; 'Planning Time': number; 'Execution Time': number },
      ];
      const scans = JSON.stringify(top.Plan).match(/"Relation Name":"_hyper_\d+_\d+_chunk"/g) ?? [];
      runs.push({
        planningMs: top['Planning Time'],
        planningBuffers: (top.Planning?.['Shared Hit Blocks'] ?? 0) + (top.Planning?.['Shared Read Blocks'] ?? 0),
        executionMs: top['Execution Time'],
        buffers: (Number(top.Plan['Shared Hit Blocks']) || 0) + (Number(top.Plan['Shared Read Blocks']) || 0),
        chunks: new Set(scans).size,
      });
    }
  } finally {
    client.release();
  }
  const middle = (pick: (plan: Figures['plan']) => number) => median(runs.map(pick));
  return {
    planningMs: middle((p) => p.planningMs),
    planningBuffers: middle((p) => p.planningBuffers),
    executionMs: middle((p) => p.executionMs),
    buffers: middle((p) => p.buffers),
    chunks: middle((p) => p.chunks),
  };
}

function print(figures: Figures) {
  console.log(`${figures.rows} rows (${Math.round(figures.bytes / 1024)} KiB) each way; median of ${ROUNDS} alternating rounds:`);
  console.log(`  from sensor_readings_hourly:             ${fixed(figures.aggregateMs, 2)} ms`);
  console.log(`  date_trunc + GROUP BY over the readings: ${fixed(figures.rawMs, 2)} ms`);
  console.log(`  the floor, the same query on a plain table of exactly these rows: ${fixed(figures.floorMs, 2)} ms`);
  console.log(
    `  aggregates / floor: ${fixed(figures.aggregateMs / figures.floorMs, 2)}x; raw / aggregates: ${fixed(figures.ratio)}x (at most ${fixed(figures.rawMs / figures.floorMs)}x here)`,
  );
  if (figures.materializedMs !== null)
    console.log(
      `  the same query on the aggregate's materialization hypertable, without the real-time branch: ` +
        `${fixed(figures.materializedMs, 2)} ms, ${fixed(figures.materializedMs / figures.floorMs, 2)}x the floor`,
    );
  console.log(
    `  (as node-pg row objects: ${fixed(figures.aggregateParsedMs, 1)} ms vs ${fixed(figures.rawParsedMs, 1)} ms, ` +
      `${fixed(figures.parsedRatio)}x: client-side parsing of the same ${figures.rows} rows adds the same to both)`,
  );
  console.log(
    `  (server execution only, EXPLAIN ANALYZE: ${fixed(figures.aggregateServerMs, 1)} ms vs ` +
      `${fixed(figures.rawServerMs, 1)} ms, ${fixed(figures.serverRatio)}x: formatting and sending the same rows is the rest)`,
  );
  const plan = figures.plan;
  console.log(
    `  the aggregate query, EXPLAIN (ANALYZE, BUFFERS) warm: planning ${fixed(plan.planningMs, 2)} ms (${plan.planningBuffers} buffers), ` +
      `execution ${fixed(plan.executionMs, 2)} ms (${plan.buffers} buffers)${plan.chunks ? `, ${plan.chunks} chunks read` : ''}`,
  );
}

function printRoute(route: RouteYear) {
  console.log(
    `through the route (GET /api/v1/sensor-data?aggregation=hourly, ${route.pages} pages of up to 1,000, warm), median of ${ROUNDS} alternating walks:`,
  );
  console.log(
    `  from the aggregates: ${fixed(route.aggregateMs, 1)} ms; from a plain table of the same rows: ${fixed(route.floorMs, 1)} ms`,
  );
  console.log(`  aggregates / floor: ${fixed(route.ratio, 2)}x`);
}

console.log(
  `sensor benchmark (a): hourly history of one unit over ${DAYS} days, aggregates vs floor and raw${script.quick ? ' (quick)' : ''}`,
);
const db = await script.createBenchDatabase('hourly', 4, [P4]);
console.log(db.note);
try {
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
  const route = await measureRouteYear(db, company, unit, { first: FROM.slice(0, 10), last: LAST_DAY }, ROUNDS);
  printRoute(route);
  const extra = rowStore
    ? `; with the readings' chunks not yet compressed: floor ${fixed(rowStore.aggregateMs / rowStore.floorMs, 2)}x, raw ${fixed(rowStore.ratio)}x`
    : '';
  const plan = figures.plan;
  const withoutUnion =
    figures.materializedMs === null
      ? ''
      : `; without the view's real-time branch ${fixed(figures.materializedMs / figures.floorMs, 2)}x the floor by COPY`;
  const copyRatio = figures.aggregateMs / figures.floorMs;
  const rawCounts = script.profile === 'postgres';
  script.report([
    {
      ...P4,
      pass: copyRatio <= FLOOR_TARGET && route.ratio <= FLOOR_TARGET && (!rawCounts || figures.ratio >= RAW_TARGET),
      measured:
        `floor ${fixed(copyRatio, 2)}x by COPY (${fixed(figures.aggregateMs, 2)} vs ${fixed(figures.floorMs, 2)} ms), ` +
        `${fixed(route.ratio, 2)}x through the route (${fixed(route.aggregateMs, 1)} vs ${fixed(route.floorMs, 1)} ms); ` +
        `raw bucketing ${fixed(figures.ratio)}x${rawCounts ? '' : ' (not a target on timescale)'}`,
      ratio: Math.max(copyRatio, route.ratio),
      detail:
        `median of ${ROUNDS} alternating rounds; ${figures.rows} rows via COPY TO STDOUT, ${route.records} records in ${route.pages} pages through the route; ` +
        `raw bucketing ${fixed(figures.rawMs, 1)} ms; as node-pg rows ${fixed(figures.parsedRatio)}x; server execution ${fixed(figures.serverRatio)}x; ` +
        `aggregate query planning ${fixed(plan.planningMs, 1)} ms + execution ${fixed(plan.executionMs, 1)} ms, ${plan.buffers} buffers${plan.chunks ? ` in ${plan.chunks} chunks` : ''}; ` +
        `${readings} readings of ${UNITS} units in the table; ${script.profile} profile${withoutUnion}${extra}`,
    },
  ]);
} finally {
  await db.drop();
}
