// Benchmark (a), the kit's P4: a year of hourly history for one unit, read from the hourly
// aggregate vs bucketed from the raw readings at query time (date_trunc + GROUP BY), in one run,
// alternating the two queries. Both return the same 17,520 rows (365 days x 24 h x 2 types).
// Other units' readings share the table, as in production (10,000 units there; 100 here), so one
// unit's raw year is spread over many pages; the aggregate tables' closed months have been
// compacted by the store's upkeep, as they would be after a year in service. Timed: the database
// producing the rows and sending them (COPY ... TO STDOUT, the bytes drained), not node-pg
// turning them into objects, which costs the same for both and would only blur the comparison;
// the parsed-rows figure is printed too.
// Target: the aggregate at least 10x faster.
// Storage profiles: the store as a year in service leaves it. postgres: closed months of the
// aggregate tables compacted. timescale: the policies run (both aggregates materialized and, with
// migration 008's layout, in the columnstore; the readings' chunks compressed a week after they
// end, which is every loaded chunk here). The timescale run also measures the moment before the
// readings' compression (the aggregates already laid out), printed for comparison: columnar raw
// readings make bucketing them at query time itself ~2-3x faster.
//   node --import tsx bench/sensor-hourly-aggregates.ts [--quick] [--profile postgres|timescale]
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { to as copyTo } from 'pg-copy-streams';
import {
  aggregateLayout,
  type BenchDatabase,
  createBenchDatabase,
  createUnits,
  fixed,
  loadReadings,
  median,
  profile,
  quick,
  report,
  timed,
  upkeepAfter,
} from './sensor-common.js';

const UNITS = quick ? 40 : 100;
const DAYS = 365;
const ROUNDS = quick ? 9 : 15;
const END = new Date('2026-01-01T00:00:00Z');
const FROM = new Date(END.getTime() - DAYS * 86_400_000).toISOString();
const TARGET = 10;

const aggregate = (unit: number) => `
  SELECT bucket, cooling_unit_id, specification_type, value, min, max, sample_count
  FROM sensor_readings_hourly
  WHERE cooling_unit_id = ${unit} AND bucket >= '${FROM}' AND bucket < '${END.toISOString()}'
  ORDER BY bucket, specification_type`;
const fromRaw = (unit: number) => `
  SELECT date_trunc('hour', recorded_at) AS bucket, cooling_unit_id, specification_type,
         avg(value) AS value, min(value) AS min, max(value) AS max, count(*)::int AS sample_count
  FROM sensor_readings
  WHERE cooling_unit_id = ${unit} AND recorded_at >= '${FROM}' AND recorded_at < '${END.toISOString()}'
  GROUP BY 1, 2, 3
  ORDER BY 1, 3`;

const P4 = { key: 'P4', name: `hourly aggregate vs raw bucketing, 1 unit x ${DAYS} days (target >= ${TARGET}x)` };

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
  /** the aggregate query's EXPLAIN (ANALYZE, BUFFERS), warm: median planning and execution */
  plan: { planningMs: number; planningBuffers: number; executionMs: number; buffers: number; chunks: number };
}

/** ROUNDS alternating rounds of both queries, three ways each (COPY, node-pg rows, EXPLAIN ANALYZE). */
async function measure(db: BenchDatabase, unit: number): Promise<Figures> {
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
  // the floor: the answer's rows in a table of their own, read in the same order
  await db.pool.query(`DROP TABLE IF EXISTS p4_floor; CREATE TABLE p4_floor AS ${aggregate(unit)}; ANALYZE p4_floor`);
  const floor = 'SELECT * FROM p4_floor ORDER BY bucket, specification_type';

  // the database's own execution time, rows produced but not formatted or sent
  const executed = async (sql: string) => {
    const { rows: plan } = await db.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, TIMING OFF) ${sql}`);
    return Number(/Execution Time: ([\d.]+) ms/.exec(plan.map((row) => row['QUERY PLAN']).join('\n'))?.[1] ?? NaN);
  };
  const times = {
    floor: [] as number[],
    aggregate: [] as number[],
    raw: [] as number[],
    aggregateParsed: [] as number[],
    rawParsed: [] as number[],
    aggregateServer: [] as number[],
    rawServer: [] as number[],
  };
  let bytes = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const a = await timed(() => copied(aggregate(unit)));
    times.aggregate.push(a.ms);
    bytes = a.result;
    times.raw.push((await timed(() => copied(fromRaw(unit)))).ms);
    times.floor.push((await timed(() => copied(floor))).ms);
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
    aggregateParsedMs: median(times.aggregateParsed),
    rawParsedMs: median(times.rawParsed),
    parsedRatio: median(times.rawParsed) / median(times.aggregateParsed),
    aggregateServerMs: median(times.aggregateServer),
    rawServerMs: median(times.rawServer),
    serverRatio: median(times.rawServer) / median(times.aggregateServer),
    plan: await explained(db, aggregate(unit)),
  };
}

/** EXPLAIN (ANALYZE, BUFFERS) five times on one warm connection: median planning/execution time and buffers. */
async function explained(db: BenchDatabase, sql: string): Promise<Figures['plan']> {
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
  console.log(`  ratio: ${fixed(figures.ratio)}x`);
  console.log(
    `  (the floor, the same rows from a table holding exactly them: ${fixed(figures.floorMs, 2)} ms, so at most ${fixed(figures.rawMs / figures.floorMs)}x here)`,
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

console.log(`sensor benchmark (a): hourly history of one unit over ${DAYS} days, aggregate vs raw${quick ? ' (quick)' : ''}`);
const db = await createBenchDatabase('hourly', 4, [P4]);
console.log(db.note);
try {
  await createUnits(db.pool, UNITS);
  const loaded = await loadReadings(db.pool, UNITS, DAYS, END);
  console.log(`loaded ${loaded.rows} readings (${UNITS} units x ${DAYS} days) through the ingest in ${fixed(loaded.seconds)} s`);
  const unit = Math.ceil(UNITS / 2);
  const upkeepAt = new Date(END.getTime() + 4 * 86_400_000);

  // timescale: first the aggregates as the policies leave them, the readings' chunks not yet compressed
  let rowStore: Figures | null = null;
  if (profile === 'timescale') {
    const aggregates = await upkeepAfter(db, upkeepAt, ['refresh hourly', 'refresh daily', 'columnstore hourly', 'columnstore daily']);
    console.log(
      `policies run (${aggregates.steps.join(', ')}) and VACUUM ANALYZE: ${fixed(aggregates.seconds)} s; ${await aggregateLayout(db.pool)}`,
    );
    console.log("before the readings' compression (the week after a chunk ends, or a store without that policy):");
    rowStore = await measure(db, unit);
    print(rowStore);
  }
  // what the store's upkeep has done after a year in service (postgres: the aggregate tables' closed months
  // compacted; timescale: the readings' chunks compressed too)
  const upkeep = await upkeepAfter(db, upkeepAt);
  console.log(
    `upkeep over the loaded year (${upkeep.steps.join(', ') || 'nothing left to run'}; VACUUM ANALYZE): ${fixed(upkeep.seconds)} s`,
  );
  if (profile === 'timescale') console.log(`after a year in service, the readings' chunks compressed too:`);
  const figures = await measure(db, unit);
  print(figures);
  const extra = rowStore
    ? `; with the readings' chunks not yet compressed ${fixed(rowStore.ratio)}x (${fixed(rowStore.aggregateMs, 2)} vs ${fixed(rowStore.rawMs, 2)} ms)`
    : '';
  const plan = figures.plan;
  report([
    {
      ...P4,
      pass: figures.ratio >= TARGET,
      measured: `${fixed(figures.ratio)}x (${fixed(figures.aggregateMs, 2)} ms vs ${fixed(figures.rawMs, 2)} ms)`,
      ratio: figures.ratio,
      detail:
        `median of ${ROUNDS}; ${figures.rows} rows via COPY TO STDOUT; as node-pg rows ${fixed(figures.parsedRatio)}x; server execution ${fixed(figures.serverRatio)}x; ` +
        `floor (the same rows from a plain table) ${fixed(figures.floorMs, 1)} ms, at most ${fixed(figures.rawMs / figures.floorMs)}x; ` +
        `aggregate query planning ${fixed(plan.planningMs, 1)} ms + execution ${fixed(plan.executionMs, 1)} ms, ${plan.buffers} buffers${plan.chunks ? ` in ${plan.chunks} chunks` : ''}; ` +
        `${loaded.rows} readings of ${UNITS} units in the table; ${profile} profile${extra}`,
    },
  ]);
} finally {
  await db.drop();
}
