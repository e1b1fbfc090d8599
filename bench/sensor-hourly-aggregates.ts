// Benchmark (a), P4: a year of one unit's hourly history from the aggregate within 1.3x of its
// floor, the same rows from a plain table of exactly them, by COPY and through the route; on
// postgres also >= 10x faster than bucketing raw readings. COPY ... TO STDOUT times the database
// producing and sending the rows, not node-pg's parsing, which costs both the same and only blurs
// the ratio. Through the route, a second app's connections put the floor's schema first on their
// search_path, so the same route, SQL text and serializer answer both.
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
const LAST_DAY = new Date(script.END.getTime() - 86_400_000).toISOString().slice(0, 10);
const FLOOR_TARGET = 1.3;
const RAW_TARGET = 10;
const FLOOR_SCHEMA = 'p4_floor';
const PAGE_SIZE = 1000;
const rawCounts = script.profile === 'postgres';

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
    (rawCounts ? ` and vs raw bucketing (target >= ${RAW_TARGET}x)` : ''),
};

/**
 * ROUNDS mirrored rounds by COPY of the aggregate, the floor and raw bucketing; timescale also
 * times the aggregate's materialization hypertable (the view without its real-time branch).
 */
async function measureCopy(db: script.BenchDatabase, unit: number) {
  const [aggregateRows, rawRows] = await Promise.all([db.pool.query(aggregate(unit)), db.pool.query(fromRaw(unit))]);
  if (aggregateRows.rowCount !== rawRows.rowCount) throw new Error(`row counts differ: ${aggregateRows.rowCount} vs ${rawRows.rowCount}`);
  await db.pool.query(`
    DROP SCHEMA IF EXISTS ${FLOOR_SCHEMA} CASCADE;
    CREATE SCHEMA ${FLOOR_SCHEMA};
    CREATE TABLE ${FLOOR_SCHEMA}.sensor_readings_hourly AS
      ${aggregate(unit, 'public.sensor_readings_hourly')};
    CREATE INDEX ON ${FLOOR_SCHEMA}.sensor_readings_hourly (cooling_unit_id, bucket, specification_type);
    ANALYZE ${FLOOR_SCHEMA}.sensor_readings_hourly;`);
  const { rows } = rawCounts
    ? { rows: [] }
    : await db.pool.query<{ name: string }>(`
      SELECT format('%I.%I', materialization_hypertable_schema, materialization_hypertable_name) AS name
      FROM timescaledb_information.continuous_aggregates WHERE view_name = 'sensor_readings_hourly'`);
  const sql = {
    floor: aggregate(unit, `${FLOOR_SCHEMA}.sensor_readings_hourly`),
    aggregate: aggregate(unit),
    materialized: rows[0] ? aggregate(unit, rows[0].name) : '',
    raw: fromRaw(unit),
  };
  const kinds = (['floor', 'aggregate', 'materialized', 'raw'] as const).filter((kind) => sql[kind]);
  const bytes: Partial<Record<(typeof kinds)[number], number>> = {};
  const copied = async (kind: (typeof kinds)[number]) => {
    const client = await db.pool.connect();
    bytes[kind] = (await script.copyOut(client, `COPY (${sql[kind]}) TO STDOUT`).finally(() => client.release())).out;
  };
  // mirrored: the floor before the aggregate one round, after it the next
  const ms = script.medians(await script.alternate(ROUNDS, kinds, (kind) => script.msOf(() => copied(kind)), true));
  // the whole year is below the watermark, so both read the same rows: a check, not an assumption
  if (sql.materialized && bytes.materialized !== bytes.aggregate) {
    throw new Error(`the materialization hypertable sent ${bytes.materialized} bytes, the view ${bytes.aggregate}`);
  }
  return { rows: aggregateRows.rowCount ?? 0, kib: Math.round(bytes.aggregate! / 1024), ms };
}

/** The year hourly page after page through GET /api/v1/sensor-data, aggregates and floor in ROUNDS alternating warm walks. */
async function measureRoute(db: script.BenchDatabase, company: script.BenchCompany, unit: number) {
  const floorPool = createPool(db.url, 4);
  // a session setting of every connection from its start (the pool hands these options to each client)
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
  // both warm first, and the same answer from both
  const [fromAggregate, fromFloor] = [await walk(apps.aggregate), await walk(apps.floor)];
  if (fromAggregate.records !== fromFloor.records) {
    throw new Error(`the floor answered ${fromFloor.records} records, the aggregates ${fromAggregate.records}`);
  }
  const ms = script.medians(await script.alternate(ROUNDS, ['aggregate', 'floor'] as const, (side) => script.msOf(() => walk(apps[side]))));
  return { ...fromAggregate, ...ms, ratio: ms.aggregate / ms.floor };
}

await script.run({ label: 'hourly', targets: [P4] }, async (db) => {
  const { company, readings } = await script.companyStore(db, UNITS, DAYS);
  const unit = Math.ceil(UNITS / 2);
  const { rows, kib, ms } = await measureCopy(db, unit);
  const route = await measureRoute(db, company, unit);
  const [copyRatio, rawRatio] = [ms.aggregate / ms.floor, ms.raw / ms.aggregate];
  const withoutUnion = ms.materialized
    ? `; without the view's real-time branch ${fixed(ms.materialized / ms.floor, 2)}x the floor by COPY`
    : '';
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
        `median of ${ROUNDS} alternating rounds; ${rows} rows (${kib} KiB) via COPY TO STDOUT, ${route.records} records in ${route.pages} pages through the route (warm); ` +
        `raw bucketing ${fixed(ms.raw, 1)} ms; ${readings} readings of ${UNITS} units in the table; ${script.profile} profile${withoutUnion}`,
    },
  ];
});
