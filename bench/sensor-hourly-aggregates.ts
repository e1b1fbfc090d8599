// Benchmark (a), the kit's P4: a year of hourly history for one unit, read from the hourly
// aggregate vs bucketed from the raw readings at query time (date_trunc + GROUP BY), in one run,
// alternating the two queries. Both return the same 17,520 rows (365 days x 24 h x 2 types).
// Other units' readings share the table, as in production (10,000 units there; 100 here), so one
// unit's raw year is spread over many pages; the rollups' closed months have been compacted by
// the store's upkeep, as they would be after a year in service. Timed: the database producing the rows and sending them (COPY ... TO STDOUT, the
// bytes drained), not node-pg turning them into objects, which costs the same for both and would
// only blur the comparison; the parsed-rows figure is printed too.
// Target: the aggregate at least 10x faster.
//   node --import tsx bench/sensor-hourly-aggregates.ts [--quick]
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { to as copyTo } from 'pg-copy-streams';
import { createBenchDatabase, createUnits, fixed, loadReadings, median, PROFILE_NOTE, quick, report, timed, upkeepAfter } from './sensor-common.js';

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

console.log(`sensor benchmark (a): hourly history of one unit over ${DAYS} days, aggregate vs raw${quick ? ' (quick)' : ''}`);
console.log(PROFILE_NOTE);
const db = await createBenchDatabase('hourly');
try {
  await createUnits(db.pool, UNITS);
  const loaded = await loadReadings(db.pool, UNITS, DAYS, END);
  console.log(`loaded ${loaded.rows} readings (${UNITS} units x ${DAYS} days) through the ingest in ${fixed(loaded.seconds)} s`);
  // what the app's periodic upkeep does as months close: the rollups' closed months compacted
  const upkeep = await upkeepAfter(db.pool, new Date(END.getTime() + 4 * 86_400_000));
  console.log(`upkeep over the loaded year (closed months of the rollups compacted, VACUUM ANALYZE): ${fixed(upkeep)} s`);

  const unit = Math.ceil(UNITS / 2);
  const copied = async (sql: string) => {
    const client = await db.pool.connect();
    let bytes = 0;
    try {
      await pipeline(client.query(copyTo(`COPY (${sql}) TO STDOUT`)), new Writable({
        write(chunk: Buffer, _encoding, done) {
          bytes += chunk.length;
          done();
        },
      }));
    } finally {
      client.release();
    }
    return bytes;
  };
  const [aggregateRows, rawRows] = await Promise.all([db.pool.query(aggregate(unit)), db.pool.query(fromRaw(unit))]);
  if (aggregateRows.rowCount !== rawRows.rowCount) throw new Error(`row counts differ: ${aggregateRows.rowCount} vs ${rawRows.rowCount}`);
  const rows = aggregateRows.rowCount ?? 0;

  // the database's own execution time, rows produced but not formatted or sent
  const executed = async (sql: string) => {
    const { rows: plan } = await db.pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, TIMING OFF) ${sql}`);
    return Number(/Execution Time: ([\d.]+) ms/.exec(plan.map((row) => row['QUERY PLAN']).join('\n'))?.[1] ?? NaN);
  };
  const times = { aggregate: [] as number[], raw: [] as number[], aggregateParsed: [] as number[], rawParsed: [] as number[],
    aggregateServer: [] as number[], rawServer: [] as number[] };
  let bytes = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const a = await timed(() => copied(aggregate(unit)));
    times.aggregate.push(a.ms);
    bytes = a.result;
    times.raw.push((await timed(() => copied(fromRaw(unit)))).ms);
    times.aggregateParsed.push((await timed(() => db.pool.query(aggregate(unit)))).ms);
    times.rawParsed.push((await timed(() => db.pool.query(fromRaw(unit)))).ms);
    times.aggregateServer.push(await executed(aggregate(unit)));
    times.rawServer.push(await executed(fromRaw(unit)));
  }
  const serverRatio = median(times.rawServer) / median(times.aggregateServer);
  const [aggregateMs, rawMs] = [median(times.aggregate), median(times.raw)];
  const ratio = rawMs / aggregateMs;
  const parsedRatio = median(times.rawParsed) / median(times.aggregateParsed);
  console.log(`${rows} rows (${Math.round(bytes / 1024)} KiB) each way; median of ${ROUNDS} alternating rounds:`);
  console.log(`  from sensor_readings_hourly:             ${fixed(aggregateMs, 2)} ms`);
  console.log(`  date_trunc + GROUP BY over the readings: ${fixed(rawMs, 2)} ms`);
  console.log(`  (as node-pg row objects: ${fixed(median(times.aggregateParsed), 1)} ms vs ${fixed(median(times.rawParsed), 1)} ms, ` +
    `${fixed(parsedRatio)}x: client-side parsing of the same ${rows} rows adds the same to both)`);
  console.log(`  (server execution only, EXPLAIN ANALYZE: ${fixed(median(times.aggregateServer), 1)} ms vs ` +
    `${fixed(median(times.rawServer), 1)} ms, ${fixed(serverRatio)}x: formatting and sending the same rows is the rest)`);
  report([{
    key: 'P4', name: `hourly aggregate vs raw bucketing, 1 unit x ${DAYS} days (target >= ${TARGET}x)`, pass: ratio >= TARGET,
    measured: `${fixed(ratio)}x (${fixed(aggregateMs, 2)} ms vs ${fixed(rawMs, 2)} ms)`, ratio,
    detail: `median of ${ROUNDS}; ${rows} rows via COPY TO STDOUT; as node-pg rows ${fixed(parsedRatio)}x; server execution ${fixed(serverRatio)}x; ` +
      `${loaded.rows} readings of ${UNITS} units in the table; postgres profile`,
  }]);
} finally {
  await db.drop();
}
