// docs/figures.md, "Periods that have not ended": a period's figures describe its elapsed part. Counts
// and sums count what was recorded (0 in a period that has not begun); averages and stocks are
// taken over or at the end of the elapsed part, and are null when there is none. Every endpoint,
// on the issue's example: November and December by month, seen on 2026-11-15 12:00.
import t from 'tap';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';
import { issueToken } from '../../helpers/tokens.js';

const ctx = await createTestApp(t);
ctx.clock.set(new Date('2026-11-15T12:00:00Z'));
const pool = ctx.db.pool;
const acme = await createCompany(pool, 'Not Begun');
await pool.query("UPDATE cooling_units SET deleted_at = '2026-01-01T00:00:00Z' WHERE deleted");
const [unitA] = acme.unitIds as [number];
const [farmer] = acme.farmerIds as [number];
const one = async (sql: string, params: unknown[]) => (await pool.query<{ id: string }>(sql, params)).rows[0]!.id;

await pool.query("UPDATE users SET date_joined = '2026-10-01T00:00:00Z' WHERE id = $1", [farmer]);
const crop = await one(
  "INSERT INTO crops (name, emission_factor_without_cooling, emission_factor_with_cooling) VALUES ('Okra', 0.5, 0.1) RETURNING id",
  [],
);
// 10 crates of 20 kg in on 11-01 00:00; one leaves 11-10 00:00 (a paid check-out with a market survey)
const checkIn = await one(
  "INSERT INTO check_ins (cooling_unit_id, farmer_id, checked_in_at) VALUES ($1, $2, '2026-11-01T00:00:00Z') RETURNING id",
  [unitA, farmer],
);
const crates = (
  await pool.query<{ id: string }>(
    'INSERT INTO crates (check_in_id, cooling_unit_id, crop_id, initial_weight_kg) SELECT $1, $2, $3, 20 FROM generate_series(1, 10) RETURNING id',
    [checkIn, unitA, crop],
  )
).rows.map((row) => row.id);
const checkOut = await one(
  `INSERT INTO check_outs (cooling_unit_id, farmer_id, checked_out_at, currency, cooling_fees, paid, payment_method)
   VALUES ($1, $2, '2026-11-10T00:00:00Z', 'NGN', 100, true, 'CASH') RETURNING id`,
  [unitA, farmer],
);
await pool.query('INSERT INTO crate_check_outs (check_out_id, crate_id, percentage, weight_kg, days_stored) VALUES ($1, $2, 100, 20, 9)', [
  checkOut,
  crates[0],
]);
await pool.query("UPDATE crates SET fully_checked_out_at = '2026-11-10T00:00:00Z' WHERE id = $1", [crates[0]]);
await pool.query(
  `INSERT INTO market_surveys (check_out_id, crop_id, currency, selling_price_per_unit, kg_per_unit, kg_sold, kg_lost, surveyed_at)
   VALUES ($1, $2, 'NGN', 500, 20, 18, 2, '2026-11-10T09:00:00Z')`,
  [checkOut, crop],
);

const { headers } = await issueToken(ctx, acme.employeeId, { scopes: ['users', 'utilization', 'revenue', 'impact'] });
async function records(endpoint: string, query: string) {
  const response = await ctx.app.inject({ method: 'GET', url: `/api/v1/analytics/${endpoint}?${query}`, headers });
  if (response.statusCode !== 200) throw new Error(`${endpoint}?${query}: ${response.statusCode} ${response.body}`);
  return (response.json() as { data: Record<string, unknown>[] }).data;
}
const months = `start_date=2026-11-01&end_date=2026-12-31&period=month&cooling_unit_id=${unitA}`;

t.test('utilization: the current month averaged over its elapsed part, December null', async (t) => {
  const [november, december] = await records('utilization', months);
  t.strictSame(november, {
    cooling_unit_id: unitA,
    period_start: '2026-11-01',
    period_end: '2026-11-30',
    // 14.5 days elapsed: 9 crates all along and 1 for 9 days = 139.5 crate-days / 14.5 = 9.62068...
    utilization_rate: 0.0962,
    average_crates_in_storage: 9.6207,
    capacity_crates: 100,
    crates_in_storage: 9,
    kg_in_storage: 180, // now
    check_ins: 1,
    check_outs: 1,
    crates_checked_in: 10,
    kg_checked_in: 200,
    crates_checked_out: 1,
    kg_checked_out: 20,
    active_users: 1,
  });
  t.strictSame(december, {
    cooling_unit_id: unitA,
    period_start: '2026-12-01',
    period_end: '2026-12-31',
    utilization_rate: null,
    average_crates_in_storage: null,
    capacity_crates: 100,
    crates_in_storage: null,
    kg_in_storage: null,
    check_ins: 0,
    check_outs: 0,
    crates_checked_in: 0,
    kg_checked_in: 0,
    crates_checked_out: 0,
    kg_checked_out: 0,
    active_users: 0,
  });
  // today by day: half elapsed, 9 crates throughout
  const [today, tomorrow] = await records('utilization', `start_date=2026-11-15&end_date=2026-11-16&cooling_unit_id=${unitA}`);
  t.match(today, { average_crates_in_storage: 9, utilization_rate: 0.09, crates_in_storage: 9 });
  t.match(tomorrow, { average_crates_in_storage: null, utilization_rate: null, crates_in_storage: null, kg_in_storage: null });
});

t.test('users: registered_users is null for December; its counts are 0', async (t) => {
  const [november, december] = await records('users', months);
  t.strictSame(november, {
    period_start: '2026-11-01',
    period_end: '2026-11-30',
    registered_users: 1,
    active_users: 1,
    sign_ups: 0,
    by_cooling_unit: [{ cooling_unit_id: unitA, active_users: 1, check_ins: 1, check_outs: 1 }],
  });
  t.strictSame(december, {
    period_start: '2026-12-01',
    period_end: '2026-12-31',
    registered_users: null,
    active_users: 0,
    sign_ups: 0,
    by_cooling_unit: [{ cooling_unit_id: unitA, active_users: 0, check_ins: 0, check_outs: 0 }],
  });
});

t.test('revenue and impact: only counts and sums, so December is empty and zero', async (t) => {
  const [novemberRevenue, decemberRevenue] = await records('revenue', months);
  t.match(novemberRevenue, { check_outs: 1, currency_totals: [{ currency: 'NGN', total_revenue: 100 }] });
  t.strictSame(decemberRevenue, {
    cooling_unit_id: unitA,
    period_start: '2026-12-01',
    period_end: '2026-12-31',
    check_outs: 0,
    currency_totals: [],
    payment_methods: [],
  });
  const [novemberImpact, decemberImpact] = await records('impact', months);
  t.match(novemberImpact, { kg_checked_in: 200, market_surveys: 1, market_loss_share: 0.1, farmers_served: 1 });
  t.strictSame(decemberImpact, {
    cooling_unit_id: unitA,
    period_start: '2026-12-01',
    period_end: '2026-12-31',
    currency: 'NGN',
    kg_checked_in: 0,
    food_loss_prevented_kg: 0,
    market_loss_share: null,
    income_increase: 0,
    co2_reduction_kg: 0,
    farmers_served: 0,
    community_served: 0,
    market_surveys: 0,
  });
});

t.test('the default window ends today: no period in it is unbegun', async (t) => {
  for (const [endpoint, field] of [
    ['utilization', 'average_crates_in_storage'],
    ['users', 'registered_users'],
  ] as const) {
    const data = await records(endpoint, `cooling_unit_id=${unitA}`);
    t.equal(data.length, 30);
    t.ok(
      data.every((record) => typeof record[field] === 'number'),
      `${endpoint}: ${field}`,
    );
  }
});
