// The postgres profile's hourly view (migration 014): a page of hourly history is read serially,
// never by a parallel plan, even where the planner would find one cheap; and a bucket holding
// only one type's readings gives that type's row alone, without dividing by the other type's zero
// count.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { readingChunks } from '../../src/sensors/generate.js';
import { createTestDatabase } from '../helpers/db.js';
import { CSV_HEADER, loadReadings, NOW } from '../helpers/sensor-world.js';

const hourlyPage = readFileSync(new URL('../../sql/queries/sensor-data.sql', import.meta.url), 'utf8')
  .split('-- name: hourlyPage')[1]!
  .split('-- name:')[0]!
  .replace(/;\s*$/, '');

t.test('a page of hourly history is read serially', async (t) => {
  const db = await createTestDatabase(t);
  await db.pool.query(`
    INSERT INTO companies (id, name, country, currency) VALUES (1, 'Plan Co', 'NG', 'NGN');
    INSERT INTO locations (id, company_id, name) VALUES (1, 1, 'Site');
    INSERT INTO cooling_units (id, location_id, company_id, name, capacity_crates, capacity_kg)
      SELECT g, 1, 1, 'Room ' || g, 200, 5000 FROM generate_series(1, 20) g;`);
  // 20 units x 60 days: the unit's rows are a small part of the rollup, as in service
  const csv = [...readingChunks({ units: 20, days: 60, end: NOW, seed: 3 })].join('');
  const stats = await loadReadings(db, csv, () => NOW);
  t.equal(stats.inserted, 20 * 60 * 192, 'the readings loaded');
  await db.pool.query('ANALYZE');

  const client = await db.pool.connect();
  t.teardown(() => client.release());
  // parallel plans made as cheap as they can be: any the planner may build, it now prefers
  await client.query(`SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
                      SET min_parallel_index_scan_size = 0; SET max_parallel_workers_per_gather = 2`);
  const from = new Date(NOW.getTime() - 40 * 86_400_000).toISOString();
  const to = new Date(NOW.getTime() - 19 * 86_400_000).toISOString();
  for (const [label, seek] of [
    ['first page', [null, null, null]],
    ['a page after a key', [new Date(NOW.getTime() - 30 * 86_400_000).toISOString(), 7, 'HUMIDITY']],
  ] as const) {
    const params = [[7], ['TEMPERATURE', 'HUMIDITY'], from, to, ...seek, 0, 1000];
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${hourlyPage}`, params);
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
    t.notMatch(plan, /Gather|Parallel/, `${label}: no parallel plan`);
    t.match(plan, /Scan on sensor_rollup_hourly /, `${label}: read from the rollup`);
    const page = await client.query<{ timestamp: string; specification_type: string }>(hourlyPage, params);
    t.ok(page.rows.length > 0 && page.rows.length <= 1000, `${label}: ${page.rows.length} rows`);
  }
});

t.test('a bucket with one type only: that type alone, no division by zero', async (t) => {
  const db = await createTestDatabase(t);
  await db.pool.query(`
    INSERT INTO companies (id, name, country, currency) VALUES (1, 'Plan Co', 'NG', 'NGN');
    INSERT INTO locations (id, company_id, name) VALUES (1, 1, 'Site');
    INSERT INTO cooling_units (id, location_id, company_id, name, capacity_crates, capacity_kg) VALUES (1, 1, 1, 'Room', 200, 5000);`);
  const hour = '2026-03-10T08';
  const csv = [CSV_HEADER, `1,HUMIDITY,${hour}:00:00Z,80`, `1,HUMIDITY,${hour}:30:00Z,90`, `1,TEMPERATURE,2026-03-10T09:00:00Z,4.5`].join(
    '\n',
  );
  await loadReadings(db, csv, () => NOW);
  const { rows } = await db.pool.query<{ bucket: Date; specification_type: string; value: number; sample_count: number }>(
    `SELECT bucket, specification_type::text, value, sample_count FROM sensor_readings_hourly WHERE cooling_unit_id = 1 ORDER BY bucket, 2`,
  );
  t.same(
    rows.map((row) => [row.bucket.toISOString(), row.specification_type, row.value, row.sample_count]),
    [
      [`${hour}:00:00.000Z`, 'HUMIDITY', 85, 2],
      ['2026-03-10T09:00:00.000Z', 'TEMPERATURE', 4.5, 1],
    ],
    'one row per type that has readings in the bucket',
  );
});
