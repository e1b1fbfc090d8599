// The benchmark data set, set-based SQL with setseed over a fixed 366-day window, so runs on
// different days compare: four companies (config.ts layoutOf) with their sites, units (one
// soft-deleted each), people and movements; then the run's credentials (credentials.ts).
import pg from 'pg';
import type { SensorStorageConfig } from '../../src/config.js';
import { migrate } from '../../src/db/migrate.js';
import { type DatasetSize, FARMER_BASE, type Layout, layoutOf, LOCATIONS_PER_COMPANY, OPERATOR_BASE, WINDOW } from './config.js';
import { type CredentialNeeds, type Credentials, issueCredentials } from './credentials.js';

export interface Dataset {
  name: string;
  url: string;
  layout: Layout;
  credentials: Credentials;
  pool: pg.Pool;
}

async function loadOperationalRows(pool: pg.Pool, layout: Layout) {
  const { size } = layout;
  const farmers = size.farmersPerCompany;
  const units = layout.companies.flatMap((company) => [
    ...company.unitIds.map((id, i) => ({
      id,
      company: company.id,
      location: company.locationIds[i % LOCATIONS_PER_COMPANY]!,
      deleted: false,
    })),
    { id: company.deletedUnitId, company: company.id, location: company.locationIds[0]!, deleted: true },
  ]);
  await pool.query('SELECT setseed(0.42)');
  await pool.query(
    `INSERT INTO companies (id, name, country, currency) SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[])`,
    [
      layout.companies.map((c) => c.id),
      layout.companies.map((c) => c.name),
      layout.companies.map((c) => c.country),
      layout.companies.map((c) => c.currency),
    ],
  );
  await pool.query(
    `INSERT INTO locations (id, company_id, name) SELECT id, company_id, 'Site ' || id FROM unnest($1::int[], $2::int[]) AS l (id, company_id)`,
    [layout.companies.flatMap((c) => c.locationIds), layout.companies.flatMap((c) => c.locationIds.map(() => c.id))],
  );
  await pool.query(
    `INSERT INTO cooling_units (id, location_id, company_id, name, capacity_crates, capacity_kg, price, deleted, deleted_at)
     SELECT id, location_id, company_id, 'Room ' || id, 150 + (id % 5) * 50, 5000, 40 + id % 20, deleted,
            CASE WHEN deleted THEN timestamptz '2025-06-01' END
     FROM unnest($1::int[], $2::int[], $3::int[], $4::bool[]) AS u (id, company_id, location_id, deleted)`,
    [units.map((u) => u.id), units.map((u) => u.company), units.map((u) => u.location), units.map((u) => u.deleted)],
  );
  await pool.query(`
    INSERT INTO users (id, role, company_id, first_name)
      SELECT ${OPERATOR_BASE} + l.id, 'OPERATOR', l.company_id, 'Operator' FROM locations l;
    INSERT INTO operator_assignments (operator_id, cooling_unit_id)
      SELECT ${OPERATOR_BASE} + u.location_id, u.id FROM cooling_units u;
    INSERT INTO users (id, role, company_id, first_name, user_code, registered_by, date_joined)
      SELECT ${FARMER_BASE} + (c - 1) * ${farmers} + f, 'FARMER', c, 'Farmer', 'BF' || c || '-' || f,
             ${OPERATOR_BASE} + (c - 1) * ${LOCATIONS_PER_COMPANY} + 1 + f % ${LOCATIONS_PER_COMPANY},
             timestamptz '2024-06-01' + (f * 7919 % 578) * interval '1 day'
      FROM generate_series(1, ${layout.companies.length}) c, generate_series(1, ${farmers}) f;
    INSERT INTO crops (id, name, emission_factor_without_cooling, emission_factor_with_cooling)
      VALUES (1, 'Tomato', 1.2, 0.4), (2, 'Onion', 0.6, 0.35), (3, 'Pepper', 0.9, 0.3);
    INSERT INTO baseline_surveys (farmer_id, crop_id, loss_share, currency, average_price_per_kg, surveyed_at)
      SELECT u.id, 1 + u.id % 3, round((0.1 + random() * 0.4)::numeric, 4), c.currency,
             round((100 + random() * 300)::numeric, 2), timestamptz '2024-05-01'
      FROM users u JOIN companies c ON c.id = u.company_id WHERE u.role = 'FARMER';
    INSERT INTO check_ins (id, cooling_unit_id, farmer_id, operator_id, checked_in_at)
      SELECT row_number() OVER (ORDER BY u.id, d, i), u.id,
             ${FARMER_BASE} + (u.company_id - 1) * ${farmers} + 1 + (u.id * 7919 + d * 31 + i * 17) % ${farmers},
             ${OPERATOR_BASE} + u.location_id,
             timestamptz '${WINDOW.first}' + d * interval '1 day' + (5 + 3 * i) * interval '1 hour' + (u.id % 60) * interval '1 minute'
      FROM cooling_units u, generate_series(0, ${WINDOW.days - 1}) d, generate_series(1, ${size.checkInsPerDay}) i
      WHERE NOT u.deleted;
    INSERT INTO crates (check_in_id, cooling_unit_id, crop_id, initial_weight_kg, fully_checked_out_at)
      SELECT ci.id, ci.cooling_unit_id, 1 + (ci.id + k) % 3, round((10 + random() * 20)::numeric, 2),
             CASE WHEN out_at < timestamptz '${WINDOW.last}' + interval '1 day' THEN out_at END
      FROM check_ins ci
      CROSS JOIN LATERAL (SELECT ci.checked_in_at + (1 + ci.id % 4) * interval '1 day' + interval '3 hours' AS out_at) o,
           generate_series(1, 2) k;
    INSERT INTO check_outs (id, cooling_unit_id, farmer_id, operator_id, checked_out_at, currency, cooling_fees, discount, paid, payment_method, paid_at)
      SELECT id, cooling_unit_id, farmer_id, operator_id, out_at, currency, fees, round(fees * 0.05, 2), paid,
             CASE WHEN paid THEN (ARRAY['CASH', 'USSD', 'OPAY', 'BANK_TRANSFER', 'UPI']::payment_method[])[1 + (id % 5)::int] END,
             CASE WHEN paid THEN out_at END
      FROM (SELECT ci.*, ci.checked_in_at + (1 + ci.id % 4) * interval '1 day' + interval '3 hours' AS out_at,
                   CASE WHEN ci.id % 5 = 0 THEN 'USD' ELSE co.currency END AS currency,
                   round((200 + random() * 4800)::numeric, 2) AS fees, random() < 0.7 AS paid
            FROM check_ins ci JOIN cooling_units u ON u.id = ci.cooling_unit_id JOIN companies co ON co.id = u.company_id) s
      WHERE out_at < timestamptz '${WINDOW.last}' + interval '1 day';
    INSERT INTO crate_check_outs (check_out_id, crate_id, percentage, weight_kg, days_stored)
      SELECT c.check_in_id, c.id, 100, c.initial_weight_kg, 1 + c.check_in_id % 4
      FROM crates c WHERE c.fully_checked_out_at IS NOT NULL;
    INSERT INTO market_surveys (check_out_id, crop_id, currency, selling_price_per_unit, kg_per_unit, kg_sold, kg_lost, surveyed_at)
      SELECT co.id, 1 + co.id % 3, c.currency, round((2000 + random() * 8000)::numeric, 2), (ARRAY[25, 20, 7.5])[1 + (co.id % 3)::int],
             round((20 + random() * 40)::numeric, 2), round((random() * 5)::numeric, 2), co.checked_out_at + interval '1 day'
      FROM check_outs co JOIN cooling_units u ON u.id = co.cooling_unit_id JOIN companies c ON c.id = u.company_id;`);
}

/** Fills a database made by createThrowawayDatabase (the caller drops it, also on error or SIGINT). */
export async function buildDataset(
  database: { name: string; url: string },
  size: DatasetSize,
  needs: CredentialNeeds,
  log: (line: string) => void,
  /** the sensor store the migrations build (SENSOR_STORAGE, SENSOR_RETENTION_DAYS) */
  sensor: SensorStorageConfig,
): Promise<Dataset> {
  const started = performance.now();
  const layout = layoutOf(size);
  const { name, url } = database;
  await migrate(url, sensor);
  const pool = new pg.Pool({ connectionString: url, max: 4, options: '-c TimeZone=UTC' });
  pool.on('error', () => {}); // an idle client cut by DROP DATABASE ... WITH (FORCE) at the end
  try {
    await loadOperationalRows(pool, layout);
    const credentials = await issueCredentials(pool, layout, needs);

    await pool.query(`
      SELECT setval(pg_get_serial_sequence('users', 'id'), (SELECT max(id) FROM users));
      SELECT setval(pg_get_serial_sequence('check_ins', 'id'), (SELECT max(id) FROM check_ins));
      SELECT setval(pg_get_serial_sequence('check_outs', 'id'), (SELECT max(id) FROM check_outs));
      SELECT setval(pg_get_serial_sequence('cooling_units', 'id'), (SELECT max(id) FROM cooling_units));
      SELECT setval(pg_get_serial_sequence('locations', 'id'), (SELECT max(id) FROM locations));
      SELECT setval(pg_get_serial_sequence('companies', 'id'), (SELECT max(id) FROM companies));
      ANALYZE;`);
    const { rows } = await pool.query<Record<string, string>>(`
      SELECT (SELECT count(*) FROM companies) AS companies, (SELECT count(*) FROM cooling_units) AS cooling_units,
             (SELECT count(*) FROM users WHERE role = 'FARMER') AS farmers, (SELECT count(*) FROM check_ins) AS check_ins,
             (SELECT count(*) FROM crates) AS crates, (SELECT count(*) FROM check_outs) AS check_outs,
             (SELECT count(*) FROM market_surveys) AS market_surveys, (SELECT count(*) FROM api_tokens) AS api_tokens,
             (SELECT count(*) FROM users WHERE role = 'REGISTERED_EMPLOYEE') AS employees`);
    const counts = Object.fromEntries(Object.entries(rows[0]!).map(([key, value]) => [key, Number(value)]));
    const buildSeconds = (performance.now() - started) / 1000;
    log(
      `data set ${name}: ${Object.entries(counts)
        .map(([k, v]) => `${v} ${k}`)
        .join(', ')} in ${buildSeconds.toFixed(1)} s`,
    );
    return { name, url, layout, pool, credentials };
  } catch (error) {
    await pool.end();
    throw error;
  }
}
