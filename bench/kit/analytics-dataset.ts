// The analytics data set of bench/analytics-scale.ts (P10) and bench/generic-plans.ts, in set-based SQL: one
// company, `units` units over 20 sites, 5,000 farmers, `days` days of movements.
import pg from 'pg';

/** Builds the data set into the (migrated) database at `url`, or leaves the one already there. */
export async function buildAnalyticsDataset(url: string, units: number, days: number): Promise<void> {
  // the data set is built without the service's query deadline (a minute or more on 2 busy cores)
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const built = await pool.query<{ n: string }>('SELECT count(*) AS n FROM companies');
  if (built.rows[0]!.n !== '0') {
    console.log('reusing the data set already in the database (built relative to the day it was built)');
    await pool.end();
    return;
  }
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
      SELECT id, 1, 0.3, 'NGN', 250, now() - interval '400 days' FROM users WHERE role = 'FARMER';`);
  // as autovacuum leaves tables written and read for a while: statistics, and the visibility map set
  await pool.query('VACUUM ANALYZE');
  const counts = await pool.query(
    'SELECT (SELECT count(*) FROM check_ins) AS check_ins, (SELECT count(*) FROM crates) AS crates, (SELECT count(*) FROM check_outs) AS check_outs',
  );
  console.log(`built ${units} units x ${days} days in ${((Date.now() - started) / 1000).toFixed(1)} s:`, counts.rows[0]);
  await pool.end();
}
