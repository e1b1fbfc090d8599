// P4's floor through the route (bench/sensor-hourly-aggregates.ts): a year of one unit hourly read
// page after page through GET /api/v1/sensor-data?aggregation=hourly, once from the store's
// aggregates and once from a plain table holding exactly the same rows. The plain table is named
// sensor_readings_hourly in a schema of its own (p4_floor) that a second app's connections put
// first on their search_path, so the same route, the same SQL text and the same serializer answer
// both; only where the rows come from differs. The two apps alternate, round by round.
import type pg from 'pg';
import { createPool } from '../src/db/pool.js';
import { type BenchCompany, type BenchDatabase, startBenchApp } from './kit/sensor-script.js';
import { median, timed } from './kit/statistics.js';

const PAGE_SIZE = 1000;
export const FLOOR_SCHEMA = 'p4_floor';

/**
 * The floor schema: the unit's hourly rows over [from, end) copied from the aggregate into a plain
 * table, in the order the route reads them, with the index that order needs.
 */
export async function createFloorTable(pool: pg.Pool, unit: number, from: string, end: string): Promise<void> {
  await pool.query(`
    DROP SCHEMA IF EXISTS ${FLOOR_SCHEMA} CASCADE;
    CREATE SCHEMA ${FLOOR_SCHEMA};
    CREATE TABLE ${FLOOR_SCHEMA}.sensor_readings_hourly AS
      SELECT bucket, cooling_unit_id, specification_type, value, min, max, sample_count
      FROM public.sensor_readings_hourly
      WHERE cooling_unit_id = ${unit} AND bucket >= '${from}' AND bucket < '${end}'
      ORDER BY bucket, cooling_unit_id, specification_type;
    CREATE INDEX ON ${FLOOR_SCHEMA}.sensor_readings_hourly (cooling_unit_id, bucket, specification_type);
    ANALYZE ${FLOOR_SCHEMA}.sensor_readings_hourly;`);
}

export interface RouteYear {
  records: number;
  pages: number;
  aggregateMs: number;
  floorMs: number;
  /** aggregates / floor */
  ratio: number;
}

/** `rounds` alternating walks of the year (warm: every page after the first finds its boundary cached). */
export async function measureRouteYear(
  db: BenchDatabase,
  company: BenchCompany,
  unit: number,
  window: { first: string; last: string },
  rounds: number,
): Promise<RouteYear> {
  const floorPool = createPool(db.url, 4);
  // the same statements, resolved against the floor's table first: a session setting of every
  // connection from its start (the pool hands these options to each client it opens)
  const settings = (floorPool as pg.Pool & { options: pg.PoolConfig }).options;
  settings.options = `${settings.options ?? ''} -c search_path=${FLOOR_SCHEMA},public`.trim();
  const aggregateApp = await startBenchApp(db, company);
  const floorApp = await startBenchApp({ ...db, pool: floorPool }, company);
  try {
    const walk = async (bench: typeof aggregateApp) => {
      let records = 0;
      let pages = 0;
      for (let page = 1; ; page++) {
        const response = await bench.app.inject({
          method: 'GET',
          url: `/api/v1/sensor-data?cooling_unit_id=${unit}&start_date=${window.first}&end_date=${window.last}&aggregation=hourly&page_size=${PAGE_SIZE}&page=${page}`,
          headers: bench.headers,
        });
        if (response.statusCode !== 200) throw new Error(`page ${page}: ${response.statusCode} ${response.body.slice(0, 200)}`);
        const body = response.json() as { data: unknown[] };
        records += body.data.length;
        pages++;
        if (body.data.length < PAGE_SIZE) return { records, pages };
      }
    };
    // both warm first (caches, prepared statements, buffers), and the same answer from both
    const [fromAggregate, fromFloor] = [await walk(aggregateApp), await walk(floorApp)];
    if (fromAggregate.records !== fromFloor.records) {
      throw new Error(`the floor answered ${fromFloor.records} records, the aggregates ${fromAggregate.records}`);
    }
    const times = { aggregate: [] as number[], floor: [] as number[] };
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (['aggregate', 'floor'] as const) : (['floor', 'aggregate'] as const);
      for (const side of order) times[side].push((await timed(() => walk(side === 'aggregate' ? aggregateApp : floorApp))).ms);
    }
    const [aggregateMs, floorMs] = [median(times.aggregate), median(times.floor)];
    return { ...fromAggregate, aggregateMs, floorMs, ratio: aggregateMs / floorMs };
  } finally {
    await aggregateApp.app.close();
    await floorApp.app.close();
    await floorPool.end();
  }
}
