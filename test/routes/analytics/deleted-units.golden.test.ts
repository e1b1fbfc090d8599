// docs/figures.md, "Deleted units": a soft-deleted unit keeps its history. It reports on every
// period that began before its deletion, in company-wide and location figures and for a token
// granted it, with its occupancy ending at the deletion; a period it reported on reads the same
// after the deletion as before. Every endpoint, on one unit deleted 2026-03-05 12:00.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';
import { issueToken } from '../../helpers/tokens.js';

const ctx = await createTestApp(t);
ctx.clock.set(new Date('2026-03-15T12:00:00Z'));
const pool = ctx.db.pool;
const acme = await createCompany(pool, 'Retiring');
const live = acme.unitIds; // three live units, all at the one location
const [unitA] = live as [number];
const gone = acme.deletedUnitId;
const one = async (sql: string, params: unknown[]) => (await pool.query<{ id: string }>(sql, params)).rows[0]!.id;

const { headers } = await issueToken(ctx, acme.employeeId, { scopes: ['users', 'utilization', 'revenue', 'impact'] });
async function get(endpoint: string, query: string) {
  return ctx.app.inject({ method: 'GET', url: `/api/v1/analytics/${endpoint}?${query}`, headers });
}
async function records(endpoint: string, query: string) {
  const response = await get(endpoint, query);
  if (response.statusCode !== 200) throw new Error(`${endpoint}?${query}: ${response.statusCode} ${response.body}`);
  return (response.json() as { data: Record<string, unknown>[] }).data;
}
/** The live directory hears of a unit's change asynchronously (LISTEN/NOTIFY): wait until it has. */
async function untilNamed(status: number) {
  for (let i = 0; i < 200 && (await get('revenue', `cooling_unit_id=${gone}`)).statusCode !== status; i++) {
    await sleep(10);
  }
}

// the unit starts live: an operator of its own registered farmer G (02-20), who checks in 4 crates
// of 25 kg on 03-01 00:00 and takes 2 out on 03-03 00:00 (200 NGN, a market survey); 2 stay
await pool.query('UPDATE cooling_units SET deleted = false, deleted_at = NULL WHERE id = $1', [gone]);
const operator = await one("INSERT INTO users (role, company_id, first_name) VALUES ('OPERATOR', $1, 'Op gone') RETURNING id", [
  acme.companyId,
]);
await pool.query('INSERT INTO operator_assignments (operator_id, cooling_unit_id) VALUES ($1, $2)', [operator, gone]);
const farmerG = await one(
  "INSERT INTO users (role, company_id, first_name, user_code, registered_by, date_joined) VALUES ('FARMER', $1, 'G', 'RET-G', $2, '2026-02-20T00:00:00Z') RETURNING id",
  [acme.companyId, operator],
);
const crop = await one(
  "INSERT INTO crops (name, emission_factor_without_cooling, emission_factor_with_cooling) VALUES ('Maize', 0.3, 0.1) RETURNING id",
  [],
);
const checkIn = await one(
  "INSERT INTO check_ins (cooling_unit_id, farmer_id, checked_in_at) VALUES ($1, $2, '2026-03-01T00:00:00Z') RETURNING id",
  [gone, farmerG],
);
const crates = (
  await pool.query<{ id: string }>(
    'INSERT INTO crates (check_in_id, cooling_unit_id, crop_id, initial_weight_kg) SELECT $1, $2, $3, 25 FROM generate_series(1, 4) RETURNING id',
    [checkIn, gone, crop],
  )
).rows.map((row) => row.id);
const checkOut = await one(
  `INSERT INTO check_outs (cooling_unit_id, farmer_id, checked_out_at, currency, cooling_fees, paid, payment_method)
   VALUES ($1, $2, '2026-03-03T00:00:00Z', 'NGN', 200, true, 'CASH') RETURNING id`,
  [gone, farmerG],
);
for (const crate of crates.slice(0, 2)) {
  await pool.query(
    'INSERT INTO crate_check_outs (check_out_id, crate_id, percentage, weight_kg, days_stored) VALUES ($1, $2, 100, 25, 2)',
    [checkOut, crate],
  );
  await pool.query("UPDATE crates SET fully_checked_out_at = '2026-03-03T00:00:00Z' WHERE id = $1", [crate]);
}
await pool.query(
  `INSERT INTO market_surveys (check_out_id, crop_id, currency, selling_price_per_unit, kg_per_unit, kg_sold, kg_lost, surveyed_at)
   VALUES ($1, $2, 'NGN', 1000, 25, 45, 5, '2026-03-03T10:00:00Z')`,
  [checkOut, crop],
);
await untilNamed(200);

const ENDPOINTS = ['users', 'utilization', 'revenue', 'impact'];
const firstDays = 'start_date=2026-03-01&end_date=2026-03-04';
const whileLive: Record<string, Record<string, unknown>[]> = Object.fromEntries(
  await Promise.all(ENDPOINTS.map(async (endpoint) => [endpoint, await records(endpoint, firstDays)])),
);

await pool.query("UPDATE cooling_units SET deleted = true, deleted_at = '2026-03-05T12:00:00Z' WHERE id = $1", [gone]);
await untilNamed(404);

t.test('the periods it reported on read the same after its deletion, on every endpoint', async (t) => {
  for (const endpoint of ENDPOINTS) t.strictSame(await records(endpoint, firstDays), whileLive[endpoint], endpoint);
  t.ok(
    whileLive.revenue!.some((record) => record.cooling_unit_id === gone && record.check_outs === 1),
    'and they held its figures',
  );
});

t.test('utilization: a record for each period begun before the deletion, its occupancy ending there', async (t) => {
  const days = await records('utilization', 'start_date=2026-03-04&end_date=2026-03-06');
  t.strictSame(
    days.map((r) => [r.period_start, r.cooling_unit_id]),
    [
      ...[...live, gone].map((unit) => ['2026-03-04', unit]),
      ...[...live, gone].map((unit) => ['2026-03-05', unit]),
      ...live.map((unit) => ['2026-03-06', unit]),
    ],
  );
  // 03-05: the 2 crates left in it, over the 12 hours it was live
  t.match(
    days.find((r) => r.period_start === '2026-03-05' && r.cooling_unit_id === gone),
    { average_crates_in_storage: 2, utilization_rate: 0.02, crates_in_storage: 2, kg_in_storage: 50 },
  );
  const month = (await records('utilization', 'start_date=2026-03-01&end_date=2026-03-10&period=month')).at(-1);
  // 4.5 days live: 4 crates for 2 days and 2 for 4.5 = 13 crate-days / 4.5 = 2.888...
  t.strictSame(month, {
    cooling_unit_id: gone,
    period_start: '2026-03-01',
    period_end: '2026-03-10',
    utilization_rate: 0.0289,
    average_crates_in_storage: 2.8889,
    capacity_crates: 100,
    crates_in_storage: 2,
    kg_in_storage: 50,
    check_ins: 1,
    check_outs: 1,
    crates_checked_in: 4,
    kg_checked_in: 100,
    crates_checked_out: 2,
    kg_checked_out: 50,
    active_users: 1,
  });
});

t.test('revenue and impact: its money and impact stay in the periods they happened in', async (t) => {
  const month = 'start_date=2026-03-01&end_date=2026-03-10&period=month';
  const revenue = await records('revenue', month);
  t.strictSame(
    revenue.map((r) => r.cooling_unit_id),
    [...live, gone],
  );
  t.match(revenue.at(-1), { check_outs: 1, currency_totals: [{ currency: 'NGN', total_revenue: 200, paid_revenue: 200 }] });
  const impact = await records('impact', month);
  t.match(impact.at(-1), {
    cooling_unit_id: gone,
    kg_checked_in: 100,
    co2_reduction_kg: 20,
    market_surveys: 1,
    market_loss_share: 0.1,
    farmers_served: 1,
  });
  // the periods that began after it was deleted have no record of it
  const later = await records('revenue', 'start_date=2026-03-06&end_date=2026-03-10&period=week');
  t.ok(later.every((r) => live.includes(r.cooling_unit_id as number)));
});

t.test('users: its farmers stay registered; its breakdown entry and movements up to the deletion', async (t) => {
  const idle = live.map((unit) => ({ cooling_unit_id: unit, active_users: 0, check_ins: 0, check_outs: 0 }));
  const weeks = await records('users', 'start_date=2026-03-01&end_date=2026-03-10&period=week');
  t.strictSame(weeks, [
    // Sunday 03-01 (a clipped week): G checks in
    {
      period_start: '2026-03-01',
      period_end: '2026-03-01',
      registered_users: 1,
      active_users: 1,
      sign_ups: 0,
      by_cooling_unit: [...idle, { cooling_unit_id: gone, active_users: 1, check_ins: 1, check_outs: 0 }],
    },
    {
      period_start: '2026-03-02',
      period_end: '2026-03-08',
      registered_users: 1,
      active_users: 1,
      sign_ups: 0,
      by_cooling_unit: [...idle, { cooling_unit_id: gone, active_users: 1, check_ins: 0, check_outs: 1 }],
    },
    // began after the deletion: no entry for it, and G, registered through it, is still registered
    { period_start: '2026-03-09', period_end: '2026-03-10', registered_users: 1, active_users: 0, sign_ups: 0, by_cooling_unit: idle },
  ]);
});

t.test('a filter or a token naming only live units leaves it out', async (t) => {
  t.equal((await get('users', `cooling_unit_id=${gone}`)).statusCode, 404, 'a deleted unit cannot be named');
  const live = await records('users', `start_date=2026-03-01&end_date=2026-03-10&period=month&cooling_unit_id=${unitA}`);
  t.match(live, [{ registered_users: 0, active_users: 0, by_cooling_unit: [{ cooling_unit_id: unitA }] }]);
  const restricted = await issueToken(ctx, acme.employeeId, { scopes: ['utilization'], cooling_unit_ids: [unitA] });
  const response = await ctx.app.inject({
    method: 'GET',
    url: '/api/v1/analytics/utilization?start_date=2026-03-01&end_date=2026-03-10&period=month',
    headers: restricted.headers,
  });
  t.strictSame(
    (response.json() as { data: { cooling_unit_id: number }[] }).data.map((r) => r.cooling_unit_id),
    [unitA],
    'a token granted only live units',
  );
});
