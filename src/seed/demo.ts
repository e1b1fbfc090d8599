// Loads the demo data set (docs/contract.md, "Operating contract": `npm run seed -- --demo --json`)
// and describes it with fresh JWTs. Idempotent: a company that already exists is left as it is.
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { inTransaction } from '../db/pool.js';
import { mintEmployeeJwt } from '../auth/jwt.js';
import { demoCompanies, demoCrops } from './demo-catalogue.js';
import { planCompany, type CompanyPlan } from './demo-plan.js';
import { createRandom, seedFromText } from './random.js';

export interface DemoCompanySummary {
  id: number;
  name: string;
  employee_jwt: string;
  non_employee_jwt: string;
  /** the users the two JWTs name (their `sub`): the ids `npm run mint-jwt -- <user_id>` asks for */
  employee_user_id: number;
  non_employee_user_id: number;
  location_ids: number[];
  cooling_unit_ids: number[];
  deleted_cooling_unit_ids: number[];
}

export interface DemoSummary {
  companies: DemoCompanySummary[];
}

export interface SeedDemoOptions {
  jwtSecret: string;
  jwtIssuer?: string | null;
  jwtAudience?: string | null;
  /** the clock every demo date is relative to; the same clock gives the same data */
  now?: Date;
  log?: (line: string) => void;
}

/** Changing it changes every demo figure; tests and docs may quote them. */
export const DEMO_SEED = 20_240_611;
const DEMO_JWT_TTL_SECONDS = 12 * 3600;
// any fixed number; serialises concurrent seeders (cluster workers starting together)
const SEED_LOCK_KEY = 7_310_042_611;
const READING_INTERVAL_MS = 15 * 60_000;

const sensorReadingsSql = readFileSync(new URL('../../sql/seed/demo-sensor-readings.sql', import.meta.url), 'utf8');

export async function seedDemo(pool: pg.Pool, options: SeedDemoOptions): Promise<DemoSummary> {
  const now = options.now ?? new Date();
  const log = options.log ?? (() => {});
  const names = demoCompanies.map((company) => company.name);
  const missing = await inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [SEED_LOCK_KEY]);
    const { rows } = await client.query<{ name: string }>('SELECT name FROM companies WHERE name = ANY($1::text[])', [names]);
    const present = new Set(rows.map((row) => row.name));
    const absent = demoCompanies.filter((company) => !present.has(company.name));
    if (absent.length > 0) {
      const cropIds = await upsertCrops(client);
      const lastReading = new Date(Math.floor(now.getTime() / READING_INTERVAL_MS) * READING_INTERVAL_MS);
      for (const company of absent) {
        const started = Date.now();
        // one stream per company, so a company's data does not depend on which others exist
        const plan = planCompany(company, createRandom(seedFromText(company.name, DEMO_SEED)), now);
        await insertCompany(client, plan, cropIds, lastReading);
        log(
          `seeded ${company.name}: ${plan.checkIns.length} check-ins, ${plan.checkOuts.length} ` +
            `check-outs in ${Date.now() - started} ms`,
        );
      }
    }
    for (const name of present) log(`already present: ${name}`);
    return absent;
  });
  // planner statistics for what was just loaded: without them (a server with autovacuum off, or
  // before autovacuum gets round to it) the analytics queries pick nested loops over thousands of
  // check-outs and a utilization page takes seconds instead of milliseconds
  if (missing.length > 0) await pool.query('ANALYZE');
  return describeDemo(pool, options, now);
}

async function describeDemo(pool: pg.Pool, options: SeedDemoOptions, now: Date): Promise<DemoSummary> {
  const { rows } = await pool.query<{
    id: number;
    name: string;
    location_ids: number[];
    cooling_unit_ids: number[];
    deleted_cooling_unit_ids: number[];
    employee_id: number | null;
    operator_id: number | null;
  }>(
    `
    SELECT c.id, c.name,
      ARRAY(SELECT id FROM locations WHERE company_id = c.id AND NOT deleted ORDER BY id) AS location_ids,
      ARRAY(SELECT id FROM cooling_units WHERE company_id = c.id AND NOT deleted ORDER BY id) AS cooling_unit_ids,
      ARRAY(SELECT id FROM cooling_units WHERE company_id = c.id AND deleted ORDER BY id) AS deleted_cooling_unit_ids,
      (SELECT min(id) FROM users WHERE company_id = c.id AND role = 'REGISTERED_EMPLOYEE' AND is_active) AS employee_id,
      (SELECT min(id) FROM users WHERE company_id = c.id AND role = 'OPERATOR' AND is_active) AS operator_id
    FROM companies c
    WHERE c.name = ANY($1::text[])
    ORDER BY array_position($1::text[], c.name)`,
    [demoCompanies.map((company) => company.name)],
  );

  const mint = (userId: number) =>
    mintEmployeeJwt({
      secret: options.jwtSecret,
      userId,
      issuer: options.jwtIssuer ?? null,
      audience: options.jwtAudience ?? null,
      ttlSeconds: DEMO_JWT_TTL_SECONDS,
      now,
    });
  const companies: DemoCompanySummary[] = [];
  for (const row of rows) {
    if (row.employee_id === null || row.operator_id === null) {
      throw new Error(`demo company "${row.name}" has no active employee or operator left`);
    }
    companies.push({
      id: row.id,
      name: row.name,
      employee_jwt: await mint(row.employee_id),
      non_employee_jwt: await mint(row.operator_id),
      employee_user_id: row.employee_id,
      non_employee_user_id: row.operator_id,
      location_ids: row.location_ids,
      cooling_unit_ids: row.cooling_unit_ids,
      deleted_cooling_unit_ids: row.deleted_cooling_unit_ids,
    });
  }
  return { companies };
}

async function upsertCrops(client: pg.PoolClient): Promise<Map<string, number>> {
  await insertRows(
    client,
    'crops',
    {
      name: ['text', demoCrops.map((crop) => crop.name)],
      emission_factor_without_cooling: ['numeric', demoCrops.map((crop) => crop.emissionWithoutCooling)],
      emission_factor_with_cooling: ['numeric', demoCrops.map((crop) => crop.emissionWithCooling)],
    },
    'ON CONFLICT (name) DO NOTHING',
  );
  const { rows } = await client.query<{ id: number; name: string }>('SELECT id, name FROM crops WHERE name = ANY($1::text[])', [
    demoCrops.map((crop) => crop.name),
  ]);
  return new Map(rows.map((row) => [row.name, row.id]));
}

async function insertCompany(client: pg.PoolClient, plan: CompanyPlan, cropIds: Map<string, number>, lastReading: Date): Promise<void> {
  const { company } = plan;
  const { rows } = await client.query<{ id: number }>(
    'INSERT INTO companies (name, country, currency, created_at) VALUES ($1, $2, $3, $4) RETURNING id',
    [company.name, company.country, company.currency, plan.createdAt.toISOString()],
  );
  const companyId = rows[0]!.id;
  const cropId = (name: string) => cropIds.get(name) ?? missing('crop', name);
  const constant = <T>(items: readonly unknown[], value: T) => items.map(() => value);

  const locationIds = await allocateIds(client, 'locations', company.locations.length);
  await insertRows(client, 'locations', {
    id: ['int', locationIds.all],
    company_id: ['int', constant(company.locations, companyId)],
    name: ['text', company.locations.map((l) => l.name)],
    state: ['text', company.locations.map((l) => l.state)],
    city: ['text', company.locations.map((l) => l.city)],
    created_at: ['timestamptz', constant(company.locations, iso(plan.createdAt))],
  });

  const units = plan.units;
  const unitIds = await allocateIds(client, 'cooling_units', units.length);
  await insertRows(client, 'cooling_units', {
    id: ['int', unitIds.all],
    location_id: ['int', units.map((u) => locationIds.of(u.locationIndex))],
    company_id: ['int', constant(units, companyId)],
    name: ['text', units.map((u) => u.name)],
    capacity_crates: ['int', units.map((u) => u.capacityCrates)],
    capacity_kg: ['numeric', units.map((u) => u.capacityCrates * u.crateWeightKg)],
    metric: ['unit_metric', units.map((u) => u.metric)],
    unit_type: ['cooling_unit_type', units.map((u) => u.unitType)],
    crate_weight_kg: ['numeric', units.map((u) => u.crateWeightKg)],
    pricing: ['pricing_strategy', units.map((u) => u.pricing)],
    price: ['numeric', units.map((u) => u.price)],
    has_sensor: ['boolean', constant(units, true)],
    deleted: ['boolean', units.map((u) => u.deletedAt !== null)],
    deleted_at: ['timestamptz', units.map((u) => iso(u.deletedAt))],
    created_at: ['timestamptz', units.map((u) => iso(u.createdAt))],
  });

  const users = plan.users;
  const userIds = await allocateIds(client, 'users', users.length);
  await insertRows(client, 'users', {
    id: ['int', userIds.all],
    role: ['user_role', users.map((u) => u.role)],
    company_id: ['int', constant(users, companyId)],
    first_name: ['text', users.map((u) => u.firstName)],
    last_name: ['text', users.map((u) => u.lastName)],
    phone: ['text', users.map((u) => u.phone)],
    email: ['text', users.map((u) => u.email)],
    user_code: ['text', users.map((u) => u.userCode)],
    registered_by: ['int', users.map((u) => (u.registeredBy === null ? null : userIds.of(u.registeredBy)))],
    is_active: ['boolean', users.map((u) => u.isActive)],
    date_joined: ['timestamptz', users.map((u) => iso(u.dateJoined))],
  });
  await insertRows(client, 'operator_assignments', {
    operator_id: ['int', plan.assignments.map((a) => userIds.of(a.user))],
    cooling_unit_id: ['int', plan.assignments.map((a) => unitIds.of(a.unit))],
  });

  const baseline = plan.baselineSurveys;
  await insertRows(client, 'baseline_surveys', {
    farmer_id: ['int', baseline.map((s) => userIds.of(s.farmer))],
    crop_id: ['int', baseline.map((s) => cropId(s.crop))],
    loss_share: ['numeric', baseline.map((s) => s.lossShare)],
    below_market_share: ['numeric', baseline.map((s) => s.belowMarketShare)],
    currency: ['text', constant(baseline, company.currency)],
    average_price_per_kg: ['numeric', baseline.map((s) => money(s.averagePricePerKg))],
    surveyed_at: ['timestamptz', baseline.map((s) => iso(s.surveyedAt))],
  });

  const checkInIds = await allocateIds(client, 'check_ins', plan.checkIns.length);
  await insertRows(client, 'check_ins', {
    id: ['bigint', checkInIds.all],
    cooling_unit_id: ['int', plan.checkIns.map((c) => unitIds.of(c.unit))],
    farmer_id: ['int', plan.checkIns.map((c) => userIds.of(c.farmer))],
    operator_id: ['int', plan.checkIns.map((c) => userIds.of(c.operator))],
    checked_in_at: ['timestamptz', plan.checkIns.map((c) => iso(c.at))],
  });
  const crateIds = await allocateIds(client, 'crates', plan.crates.length);
  await insertRows(client, 'crates', {
    id: ['bigint', crateIds.all],
    check_in_id: ['bigint', plan.crates.map((c) => checkInIds.of(c.checkIn))],
    cooling_unit_id: ['int', plan.crates.map((c) => unitIds.of(c.unit))],
    crop_id: ['int', plan.crates.map((c) => cropId(c.crop))],
    initial_weight_kg: ['numeric', plan.crates.map((c) => money(c.initialWeightKg))],
    fully_checked_out_at: ['timestamptz', plan.crates.map((c) => iso(c.fullyCheckedOutAt))],
  });

  const checkOuts = plan.checkOuts;
  const checkOutIds = await allocateIds(client, 'check_outs', checkOuts.length);
  await insertRows(client, 'check_outs', {
    id: ['bigint', checkOutIds.all],
    cooling_unit_id: ['int', checkOuts.map((c) => unitIds.of(c.unit))],
    farmer_id: ['int', checkOuts.map((c) => userIds.of(c.farmer))],
    operator_id: ['int', checkOuts.map((c) => userIds.of(c.operator))],
    checked_out_at: ['timestamptz', checkOuts.map((c) => iso(c.at))],
    currency: ['text', checkOuts.map((c) => c.currency)],
    cooling_fees: ['numeric', checkOuts.map((c) => money(c.coolingFees))],
    discount: ['numeric', checkOuts.map((c) => money(c.discount))],
    paid: ['boolean', checkOuts.map((c) => c.paid)],
    payment_method: ['payment_method', checkOuts.map((c) => c.paymentMethod)],
    paid_at: ['timestamptz', checkOuts.map((c) => iso(c.paidAt))],
  });
  const parts = plan.crateCheckOuts;
  await insertRows(client, 'crate_check_outs', {
    check_out_id: ['bigint', parts.map((p) => checkOutIds.of(p.checkOut))],
    crate_id: ['bigint', parts.map((p) => crateIds.of(p.crate))],
    percentage: ['numeric', parts.map((p) => money(p.percentage))],
    weight_kg: ['numeric', parts.map((p) => money(p.weightKg))],
    days_stored: ['int', parts.map((p) => p.daysStored)],
  });
  const market = plan.marketSurveys;
  await insertRows(client, 'market_surveys', {
    check_out_id: ['bigint', market.map((s) => checkOutIds.of(s.checkOut))],
    crop_id: ['int', market.map((s) => cropId(s.crop))],
    currency: ['text', market.map((s) => s.currency)],
    selling_price_per_unit: ['numeric', market.map((s) => money(s.sellingPricePerUnit))],
    kg_per_unit: ['numeric', market.map((s) => money(s.kgPerUnit))],
    kg_sold: ['numeric', market.map((s) => money(s.kgSold))],
    kg_lost: ['numeric', market.map((s) => money(s.kgLost))],
    loss_reason: ['text', market.map((s) => s.lossReason)],
    surveyed_at: ['timestamptz', market.map((s) => iso(s.surveyedAt))],
  });

  const live = units.flatMap((u, index) => (u.deletedAt === null ? [{ ...u, id: unitIds.of(index) }] : []));
  // the weeks' partitions of the postgres storage profile (a no-op for TimescaleDB)
  await client.query(
    `SELECT count(*) FROM sensor_prepare_range($1::timestamptz - interval '30 days',
    $1::timestamptz + interval '1 microsecond')`,
    [iso(lastReading)],
  );
  await client.query(sensorReadingsSql, [
    live.map((u) => u.id),
    live.map((u) => u.sensorSeed),
    live.map((u) => u.baseTemperature),
    live.map(() => company.utcOffsetHours),
    iso(lastReading),
  ]);
}

type Columns = Record<string, readonly [type: string, values: readonly unknown[]]>;

/** One INSERT ... SELECT FROM unnest(arrays) per table: a round trip per table, not per row. */
async function insertRows(client: pg.PoolClient, table: string, columns: Columns, suffix = '') {
  const names = Object.keys(columns);
  const casts = names.map((name, i) => `$${i + 1}::${columns[name]![0]}[]`);
  await client.query(
    `INSERT INTO ${table} (${names.join(', ')}) SELECT * FROM unnest(${casts.join(', ')}) ${suffix}`,
    names.map((name) => columns[name]![1]),
  );
}

/** Ids drawn up front from the table's identity, so rows can refer to each other in bulk. */
async function allocateIds(client: pg.PoolClient, table: string, count: number) {
  const { rows } = await client.query<{ id: string }>(
    `SELECT nextval(pg_get_serial_sequence($1, 'id'))::text AS id FROM generate_series(1, $2)`,
    [table, count],
  );
  const all = rows.map((row) => Number(row.id));
  return { all, of: (index: number) => all[index] ?? missing(table, String(index)) };
}

function missing(what: string, key: string): never {
  throw new Error(`demo seed: no ${what} for ${key}`);
}

const iso = (date: Date | null) => date?.toISOString() ?? null;
/** numeric columns get exact decimal text, never a float's binary expansion */
const money = (value: number) => value.toFixed(2);
