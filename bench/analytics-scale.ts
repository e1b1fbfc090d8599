// Issue target: a company with 1,000 units and a 366-day window at period=day answers a page in
// under a second. Builds that company in a throwaway database (set-based SQL), then times pages
// of every analytics endpoint through the real app (fastify.inject, warm token).
//   node --import tsx bench/analytics-scale.ts [--units 1000] [--days 366]
import { parseArgs } from 'node:util';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { mintEmployeeJwt } from '../src/auth/jwt.js';
import { loadConfig } from '../src/config.js';
import { migrate } from '../src/db/migrate.js';
import { createPool } from '../src/db/pool.js';

const { values } = parseArgs({ options: { units: { type: 'string', default: '1000' }, days: { type: 'string', default: '366' } } });
const units = Number(values.units);
const days = Number(values.days);
const admin = process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `coldtrack_bench_scale_${process.pid}`;
const url = new URL(admin);
url.pathname = `/${name}`;
const secret = 'bench-secret-bench-secret-bench-secret-000';

async function adminQuery(sql: string) {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(sql);
  await client.end();
}

await adminQuery(`CREATE DATABASE ${name}`);
try {
  await migrate(url.toString());
  const pool = createPool(url.toString(), 10);
  const started = Date.now();
  await pool.query(`
    INSERT INTO companies (id, name, country, currency) VALUES (1, 'Scale Co', 'NG', 'NGN');
    INSERT INTO locations (id, company_id, name) SELECT g, 1, 'Site ' || g FROM generate_series(1, 20) g;
    INSERT INTO cooling_units (id, location_id, company_id, name, capacity_crates, capacity_kg, price)
      SELECT g, 1 + g % 20, 1, 'Room ' || g, 200, 5000, 50 FROM generate_series(1, ${units}) g;
    INSERT INTO users (id, role, company_id, first_name) VALUES (1, 'REGISTERED_EMPLOYEE', 1, 'Bench');
    INSERT INTO users (id, role, company_id, first_name, user_code, date_joined)
      SELECT 1 + g, 'FARMER', 1, 'Farmer', 'F' || g, now() - (g % ${days}) * interval '1 day' FROM generate_series(1, 5000) g;
    INSERT INTO crops (id, name, emission_factor_without_cooling, emission_factor_with_cooling) VALUES (1, 'Tomato', 1.2, 0.4);
    SELECT setval(pg_get_serial_sequence('users', 'id'), 6000);
    -- a check-in every other day per unit, 3 crates each, checked out 4 days later
    INSERT INTO check_ins (id, cooling_unit_id, farmer_id, checked_in_at)
      SELECT row_number() OVER (), u, 2 + (u * 7 + d) % 5000, date_trunc('day', now()) - d * interval '1 day' + interval '8 hours'
      FROM generate_series(1, ${units}) u, generate_series(0, ${days} - 1, 2) d;
    INSERT INTO crates (check_in_id, cooling_unit_id, crop_id, initial_weight_kg, fully_checked_out_at)
      SELECT ci.id, ci.cooling_unit_id, 1, 25, CASE WHEN ci.checked_in_at + interval '4 days' < now() THEN ci.checked_in_at + interval '4 days' END
      FROM check_ins ci, generate_series(1, 3);
    INSERT INTO check_outs (id, cooling_unit_id, farmer_id, checked_out_at, currency, cooling_fees, discount, paid, payment_method)
      SELECT ci.id, ci.cooling_unit_id, ci.farmer_id, ci.checked_in_at + interval '4 days', 'NGN', 600.50, 0.25, ci.id % 3 <> 0,
             CASE WHEN ci.id % 3 <> 0 THEN (ARRAY['CASH','USSD','OPAY']::payment_method[])[1 + ci.id % 3] END
      FROM check_ins ci WHERE ci.checked_in_at + interval '4 days' < now();
    INSERT INTO crate_check_outs (check_out_id, crate_id, percentage, weight_kg, days_stored)
      SELECT c.check_in_id, c.id, 100, 25, 4 FROM crates c WHERE c.fully_checked_out_at IS NOT NULL;
    INSERT INTO market_surveys (check_out_id, crop_id, currency, selling_price_per_unit, kg_per_unit, kg_sold, kg_lost, surveyed_at)
      SELECT co.id, 1, 'NGN', 9000, 25, 70, 5, co.checked_out_at FROM check_outs co;
    INSERT INTO baseline_surveys (farmer_id, crop_id, loss_share, currency, average_price_per_kg, surveyed_at)
      SELECT id, 1, 0.3, 'NGN', 250, now() - interval '400 days' FROM users WHERE role = 'FARMER';
    ANALYZE;`);
  const counts = await pool.query("SELECT (SELECT count(*) FROM check_ins) AS check_ins, (SELECT count(*) FROM crates) AS crates, (SELECT count(*) FROM check_outs) AS check_outs");
  console.log(`built ${units} units x ${days} days in ${((Date.now() - started) / 1000).toFixed(1)} s:`, counts.rows[0]);

  const config = loadConfig({ DATABASE_URL: url.toString(), JWT_SECRET: secret, LOG_LEVEL: 'warn' });
  const app = await buildApp({ config, pool });
  const jwt = await mintEmployeeJwt({ secret, userId: 1 });
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/api-tokens',
    headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
    payload: { name: 'bench', scopes: ['users', 'utilization', 'revenue', 'impact'] },
  });
  const headers = { authorization: `Bearer ${created.json().token}` };
  const end = new Date().toISOString().slice(0, 10);
  const start = new Date(Date.now() - (days - 1) * 86_400_000).toISOString().slice(0, 10);
  const window = `start_date=${start}&end_date=${end}`;
  const cases = [
    ['utilization', `period=day&page_size=100&page=1`],
    ['utilization', `period=day&page_size=100&page=1830`],
    ['utilization', `period=day&page_size=1000&page=200`],
    ['utilization', `period=month&page_size=1000&page=1`],
    ['utilization', `period=day&page_size=366&cooling_unit_id=500`],
    ['revenue', `period=day&page_size=100&page=1`],
    ['revenue', `period=day&page_size=1000&page=200`],
    ['impact', `period=day&page_size=100&page=1`],
    ['impact', `period=day&page_size=1000&page=200`],
    ['users', `period=day&page_size=100&page=1`],
    ['users', `period=month&page_size=13&page=1`],
  ];
  console.log('endpoint      query                                   status  ms (best of 3)  records');
  for (const [endpoint, query] of cases) {
    let best = Infinity;
    let status = 0;
    let records = 0;
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      const response = await app.inject({ method: 'GET', url: `/api/v1/analytics/${endpoint}?${window}&${query}`, headers });
      best = Math.min(best, performance.now() - t0);
      status = response.statusCode;
      records = status === 200 ? response.json().data.length : 0;
    }
    console.log(`${endpoint!.padEnd(13)} ${query!.padEnd(40)} ${status}     ${best.toFixed(0).padStart(6)}        ${records}   ${best < 1000 ? 'PASS' : 'MISS'} (< 1000 ms)`);
  }
  await app.close();
  await pool.end();
} finally {
  await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}
