// Impact figures on a small hand-built data set; every expected number is worked out by hand in
// the comments from the rows inserted here.
import t from 'tap';
import { createRollups } from '../../../src/analytics/rollups.js';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';
import { issueToken } from '../../helpers/tokens.js';

const ctx = await createTestApp(t);
ctx.clock.set(new Date('2025-03-10T12:00:00Z'));
// every rollup here runs on a worker thread, however small the page (small ones run inline otherwise)
ctx.app.rollups = createRollups({ mode: 'pool', threads: 1, db: ctx.db.pool, inlineBelowUnitDays: 0 });
const pool = ctx.db.pool;
const one = async (sql: string, params: unknown[]) => (await pool.query<{ id: number }>(sql, params)).rows[0]!.id;

const a = await createCompany(pool, 'Impact A'); // NG: household 4.7, NGN
const b = await createCompany(pool, 'Impact B', 'IN', 'INR'); // household 4.4
const [u1, u2, u3] = a.unitIds as [number, number, number];
const [f1, f2] = a.farmerIds as [number, number];
const f3 = await one("INSERT INTO users (role, company_id, first_name, user_code) VALUES ('FARMER', $1, 'F3', 'IA-F3') RETURNING id", [
  a.companyId,
]);
const [fb1, fb2] = b.farmerIds as [number, number];
// CO2 factors: tomato saves 0.5 - 0.1 = 0.4 kg/kg, onion 0.3 - 0.25 = 0.05 kg/kg
const tomato = await one(
  "INSERT INTO crops (name, emission_factor_without_cooling, emission_factor_with_cooling) VALUES ('Tomato', 0.5, 0.1) RETURNING id",
  [],
);
const onion = await one(
  "INSERT INTO crops (name, emission_factor_without_cooling, emission_factor_with_cooling) VALUES ('Onion', 0.3, 0.25) RETURNING id",
  [],
);

async function baseline(farmer: number, at: string, lossShare: string, currency: string, pricePerKg: string) {
  await pool.query(
    'INSERT INTO baseline_surveys (farmer_id, loss_share, currency, average_price_per_kg, surveyed_at) VALUES ($1, $2, $3, $4, $5)',
    [farmer, lossShare, currency, pricePerKg, at],
  );
}

async function checkIn(unit: number, farmer: number, at: string, crates: [number, string][]) {
  const id = await one('INSERT INTO check_ins (cooling_unit_id, farmer_id, checked_in_at) VALUES ($1, $2, $3) RETURNING id', [
    unit,
    farmer,
    at,
  ]);
  for (const [crop, kg] of crates) {
    await pool.query('INSERT INTO crates (check_in_id, cooling_unit_id, crop_id, initial_weight_kg) VALUES ($1, $2, $3, $4)', [
      id,
      unit,
      crop,
      kg,
    ]);
  }
}

interface Survey {
  currency: string;
  price: string;
  kgPerUnit: string;
  sold: string;
  lost: string;
  at?: string;
}

async function checkOut(unit: number, farmer: number, at: string, survey?: Survey) {
  const id = await one(
    `INSERT INTO check_outs (cooling_unit_id, farmer_id, checked_out_at, currency, cooling_fees, paid, payment_method)
     VALUES ($1, $2, $3, 'NGN', 100, true, 'CASH') RETURNING id`,
    [unit, farmer, at],
  );
  if (!survey) return;
  await pool.query(
    `INSERT INTO market_surveys (check_out_id, crop_id, currency, selling_price_per_unit, kg_per_unit, kg_sold, kg_lost, surveyed_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [id, tomato, survey.currency, survey.price, survey.kgPerUnit, survey.sold, survey.lost, survey.at ?? at],
  );
}

// Baselines. F1: 0.4 / 100 NGN per kg in January, 0.9 / 120 on 03-05 (after the day buckets,
// before the March month bucket ends). F2: only after March (04-01, 05-01): the earliest applies.
// F3: none.
await baseline(f1, '2025-01-01T00:00:00Z', '0.4000', 'NGN', '100.00');
await baseline(f1, '2025-03-05T00:00:00Z', '0.9000', 'NGN', '120.00');
await baseline(f2, '2025-05-01T12:00:00Z', '0.1000', 'NGN', '10.00');
await baseline(f2, '2025-04-01T12:00:00Z', '0.3000', 'NGN', '50.00');

// U1, 03-01: 125 kg in (tomato 20 + 30 + 40, onion 10 + 25); surveys: lost 2 + 5 + 0 of 80 kg
await checkIn(u1, f1, '2025-03-01T08:00:00Z', [
  [tomato, '20.00'],
  [tomato, '30.00'],
  [onion, '10.00'],
]);
await checkIn(u1, f2, '2025-03-01T09:00:00Z', [[tomato, '40.00']]);
await checkIn(u1, f3, '2025-03-01T10:00:00Z', [[onion, '25.00']]);
await checkOut(u1, f1, '2025-03-01T15:00:00Z', { currency: 'NGN', price: '3000.00', kgPerUnit: '20.00', sold: '18.00', lost: '2.00' });
await checkOut(u1, f2, '2025-03-01T16:00:00Z', { currency: 'NGN', price: '1000.00', kgPerUnit: '25.00', sold: '45.00', lost: '5.00' });
await checkOut(u1, f3, '2025-03-01T17:00:00Z', { currency: 'USD', price: '10.00', kgPerUnit: '1.00', sold: '10.00', lost: '0' });
// U2, 03-01: 0.10 + 0.20 kg in, a check-out without a survey
await checkIn(u2, f1, '2025-03-01T08:00:00Z', [
  [tomato, '0.10'],
  [tomato, '0.20'],
]);
await checkOut(u2, f2, '2025-03-01T09:00:00Z');
// U1, 03-02: 10 kg in; surveys at 400 per 3 kg and 100 per 7 kg (prices per kg 133.33... and
// 14.28...), the second taken the next day: it belongs to 03-03, when it was taken
await checkIn(u1, f1, '2025-03-02T08:00:00Z', [[tomato, '10.00']]);
await checkOut(u1, f1, '2025-03-02T12:00:00Z', { currency: 'NGN', price: '400.00', kgPerUnit: '3.00', sold: '3.00', lost: '1.00' });
await checkOut(u1, f1, '2025-03-02T13:00:00Z', {
  currency: 'NGN',
  price: '100.00',
  kgPerUnit: '7.00',
  sold: '7.00',
  lost: '0',
  at: '2025-03-03T09:00:00Z',
});
// Not company A's: company B (FB2's baseline is in USD, its survey in INR), and a unit deleted
// before the window (it reports only on periods that began before: deleted-units.golden.test.ts)
await pool.query("UPDATE cooling_units SET deleted_at = '2025-02-15T00:00:00Z' WHERE deleted");
await checkIn(a.deletedUnitId, f1, '2025-03-01T08:00:00Z', [[tomato, '999.00']]);
await baseline(fb1, '2025-01-01T00:00:00Z', '0.2000', 'INR', '20.00');
await baseline(fb2, '2025-01-01T00:00:00Z', '0.2000', 'USD', '1.00');
await checkIn(b.unitIds[0]!, fb1, '2025-03-01T08:00:00Z', [[tomato, '100.00']]);
await checkOut(b.unitIds[0]!, fb1, '2025-03-01T09:00:00Z', {
  currency: 'INR',
  price: '500.00',
  kgPerUnit: '10.00',
  sold: '90.00',
  lost: '10.00',
});
await checkOut(b.unitIds[0]!, fb2, '2025-03-01T10:00:00Z', {
  currency: 'INR',
  price: '100.00',
  kgPerUnit: '10.00',
  sold: '10.00',
  lost: '0',
});

const tokenA = await issueToken(ctx, a.employeeId, { scopes: ['impact'] });
const tokenB = await issueToken(ctx, b.employeeId, { scopes: ['impact'] });

async function impact(token: { headers: Record<string, string> }, query: string) {
  const response = await ctx.app.inject({ method: 'GET', url: `/api/v1/analytics/impact?${query}`, headers: token.headers });
  if (response.statusCode !== 200) throw new Error(`${query}: ${response.statusCode} ${response.body}`);
  return (response.json() as { data: Record<string, unknown>[] }).data;
}

const zero = {
  currency: 'NGN',
  kg_checked_in: 0,
  food_loss_prevented_kg: 0,
  market_loss_share: null,
  income_increase: 0,
  co2_reduction_kg: 0,
  farmers_served: 0,
  community_served: 0,
  market_surveys: 0,
};
const day = (unit: number, date: string) => ({ cooling_unit_id: unit, period_start: date, period_end: date });

t.test('by day', async (t) => {
  t.strictSame(await impact(tokenA, 'start_date=2025-03-01&end_date=2025-03-02'), [
    {
      ...day(u1, '2025-03-01'),
      currency: 'NGN',
      kg_checked_in: 125,
      // F1 60 kg x (0.4 - 7/80) + F2 40 kg x (0.3 - 7/80) + F3 (no baseline) = 18.75 + 8.5
      food_loss_prevented_kg: 27.25,
      market_loss_share: 0.0875,
      // F1 (3000/20 - 100) x 18 + F2 (1000/25 - 50) x 45; the USD survey does not count
      income_increase: 450,
      // tomato 90 kg x 0.4 + onion 35 kg x 0.05
      co2_reduction_kg: 37.75,
      farmers_served: 3,
      community_served: 14, // 3 x 4.7 = 14.1
      market_surveys: 3,
    },
    {
      ...day(u2, '2025-03-01'),
      ...zero,
      kg_checked_in: 0.3,
      co2_reduction_kg: 0.12,
      farmers_served: 2, // F1 checked in, F2 checked out
      community_served: 9, // 9.4
    },
    { ...day(u3, '2025-03-01'), ...zero },
    {
      ...day(u1, '2025-03-02'),
      currency: 'NGN',
      kg_checked_in: 10,
      food_loss_prevented_kg: 1.5, // 10 x (0.4 - 1/4): only the survey taken on 03-02 counts
      market_loss_share: 0.25,
      income_increase: 100, // (400/3 - 100) x 3, exactly
      co2_reduction_kg: 4,
      farmers_served: 1,
      community_served: 5, // 4.7
      market_surveys: 1,
    },
    { ...day(u2, '2025-03-02'), ...zero },
    { ...day(u3, '2025-03-02'), ...zero },
  ]);
});

t.test("a market survey belongs to the period it was taken in, whatever its check-out's", async (t) => {
  // the survey of U1's 03-02 13:00 check-out, taken 03-03 09:00: no movement at U1 on 03-03, so
  // nothing was checked in or served that day, but the survey and its income are that day's
  const [record] = await impact(tokenA, `start_date=2025-03-03&end_date=2025-03-03&cooling_unit_id=${u1}`);
  t.strictSame(record, {
    ...day(u1, '2025-03-03'),
    currency: 'NGN',
    kg_checked_in: 0,
    food_loss_prevented_kg: 0, // nothing checked in on 03-03
    market_loss_share: 0, // 0 kg lost of 7
    income_increase: -600, // F1's baseline for 03-03 is January's 100 per kg: (100/7 - 100) x 7
    co2_reduction_kg: 0,
    farmers_served: 0,
    community_served: 0,
    market_surveys: 1,
  });
  // the days add up to the month: every survey is in exactly one period
  const days = await impact(tokenA, `start_date=2025-03-01&end_date=2025-03-31&cooling_unit_id=${u1}`);
  t.equal(
    days.reduce((sum, r) => sum + (r.market_surveys as number), 0),
    5,
  );
});

t.test('a survey taken the next month belongs to that month', async (t) => {
  // U3, check-out 02-28 23:00, survey taken 03-01 08:00: February, once reconciled, stays as it was
  await checkOut(u3, f2, '2025-02-28T23:00:00Z', {
    currency: 'NGN',
    price: '600.00',
    kgPerUnit: '10.00',
    sold: '20.00',
    lost: '5.00',
    at: '2025-03-01T08:00:00Z',
  });
  const [february, march] = await impact(tokenA, `start_date=2025-02-01&end_date=2025-03-31&period=month&cooling_unit_id=${u3}`);
  t.match(february, { period_start: '2025-02-01', market_surveys: 0, market_loss_share: null, income_increase: 0, farmers_served: 1 });
  // F2 has no baseline before March ends: their earliest, 04-01 12:00 (50 per kg): (600/10 - 50) x 20
  t.match(march, { period_start: '2025-03-01', market_surveys: 1, market_loss_share: 0.2, income_increase: 200, farmers_served: 0 });
});

t.test('a farmer without a baseline counts in the pooled loss share but claims no food loss prevented', async (t) => {
  // U2, 03-05: F1 (baseline 0.9 from 03-05) checks in 100 kg; F3 (no baseline) checks in 50 kg and
  // reports 30 kg lost of 40; F1 reports 0 of 60
  await checkIn(u2, f1, '2025-03-05T08:00:00Z', [[tomato, '100.00']]);
  await checkIn(u2, f3, '2025-03-05T08:30:00Z', [[tomato, '50.00']]);
  await checkOut(u2, f1, '2025-03-05T16:00:00Z', { currency: 'NGN', price: '1000.00', kgPerUnit: '10.00', sold: '60.00', lost: '0' });
  await checkOut(u2, f3, '2025-03-05T17:00:00Z', { currency: 'NGN', price: '1000.00', kgPerUnit: '10.00', sold: '10.00', lost: '30.00' });
  const [record] = await impact(tokenA, `start_date=2025-03-05&end_date=2025-03-05&cooling_unit_id=${u2}`);
  t.strictSame(record, {
    ...day(u2, '2025-03-05'),
    currency: 'NGN',
    kg_checked_in: 150,
    // pooled: 30 lost of 100 surveyed = 0.3; F1 100 kg x (0.9 - 0.3) = 60; F3 has no baseline: 0
    food_loss_prevented_kg: 60,
    market_loss_share: 0.3,
    income_increase: -1200, // F1 (1000/10 - 120) x 60; F3 has no baseline price
    co2_reduction_kg: 60,
    farmers_served: 2,
    community_served: 9, // 9.4
    market_surveys: 2,
  });
  // a period with crates in but no survey: the loss after cooling is unknown, nothing is claimed
  await checkIn(u2, f1, '2025-03-06T08:00:00Z', [[tomato, '100.00']]);
  const [unsurveyed] = await impact(tokenA, `start_date=2025-03-06&end_date=2025-03-06&cooling_unit_id=${u2}`);
  t.match(unsurveyed, { kg_checked_in: 100, market_surveys: 0, market_loss_share: null, food_loss_prevented_kg: 0, income_increase: 0 });
});

t.test('a month bucket uses the baseline before its end', async (t) => {
  const [record] = await impact(tokenA, `start_date=2025-03-01&end_date=2025-03-31&period=month&cooling_unit_id=${u1}`);
  t.strictSame(record, {
    cooling_unit_id: u1,
    period_start: '2025-03-01',
    period_end: '2025-03-31',
    currency: 'NGN',
    kg_checked_in: 135,
    // loss share 8/91; F1 now has the 03-05 baseline 0.9: 70 x (0.9 - 8/91) + 40 x (0.3 - 8/91) = 5945/91
    food_loss_prevented_kg: 65.33,
    market_loss_share: 0.0879,
    // F1 at 120 per kg: (150 - 120) x 18 + (400/3 - 120) x 3 + (100/7 - 120) x 7 = 540 + 40 - 740; F2 -450
    income_increase: -610,
    co2_reduction_kg: 41.75,
    farmers_served: 3,
    community_served: 14,
    market_surveys: 5,
  });
});

t.test('location_id selects the same units; another company sees only its own, in its currency', async (t) => {
  const byLocation = await impact(tokenA, `start_date=2025-03-01&end_date=2025-03-01&location_id=${a.locationId}`);
  t.strictSame(
    byLocation.map((r) => r.cooling_unit_id),
    [u1, u2, u3],
  );
  t.equal(byLocation[0]!.food_loss_prevented_kg, 27.25);

  const records = await impact(tokenB, 'start_date=2025-03-01&end_date=2025-03-01');
  t.strictSame(
    records.map((r) => r.cooling_unit_id),
    b.unitIds,
  );
  t.strictSame(records[0], {
    ...day(b.unitIds[0]!, '2025-03-01'),
    currency: 'INR',
    kg_checked_in: 100,
    food_loss_prevented_kg: 10.91, // 100 x (0.2 - 10/110) = 120/11
    market_loss_share: 0.0909,
    income_increase: 2700, // FB1 (500/10 - 20) x 90; FB2's baseline is in USD
    co2_reduction_kg: 40,
    farmers_served: 2,
    community_served: 9, // 2 x 4.4 = 8.8
    market_surveys: 2,
  });
});

// A survey carries its check-out's unit for the index that finds a page's surveys
// (sql/migrations/021_market-survey-units.sql): it must never disagree with the check-out's.
t.test('a check-out corrected to another unit takes its survey along; a survey cannot be given another unit', async (t) => {
  const survey = { currency: 'NGN', price: '1000', kgPerUnit: '10', sold: '50', lost: '5' };
  await checkOut(u2, f3, '2025-03-09T10:00:00Z', survey);
  const surveysOn = async (token: typeof tokenA, units: number[]) =>
    (await impact(token, 'start_date=2025-03-09&end_date=2025-03-09'))
      .filter((r) => units.includes(r.cooling_unit_id as number))
      .map((r) => r.market_surveys);
  t.strictSame(await surveysOn(tokenA, [u2, u3]), [1, 0]);
  const checkOutId = await one("SELECT id FROM check_outs WHERE farmer_id = $1 AND checked_out_at = '2025-03-09T10:00:00Z'", [f3]);
  await pool.query('UPDATE check_outs SET cooling_unit_id = $1 WHERE id = $2', [u3, checkOutId]);
  t.strictSame(await surveysOn(tokenA, [u2, u3]), [0, 1], 'the survey moved with its check-out');
  await pool.query('UPDATE market_surveys SET cooling_unit_id = $1 WHERE check_out_id = $2', [b.unitIds[0], checkOutId]);
  const stored = await pool.query('SELECT cooling_unit_id FROM market_surveys WHERE check_out_id = $1', [checkOutId]);
  t.equal(stored.rows[0].cooling_unit_id, u3, "a direct write is overruled by the check-out's unit");
  t.strictSame(
    await surveysOn(tokenB, b.unitIds),
    b.unitIds.map(() => 0),
    'never at another company',
  );
  await t.rejects(
    pool.query(
      `INSERT INTO market_surveys (check_out_id, crop_id, currency, selling_price_per_unit, kg_per_unit, kg_sold, surveyed_at)
       VALUES (-1, $1, 'NGN', 1, 1, 1, now())`,
      [tomato],
    ),
    { code: '23503', message: 'check-out -1 does not exist (market_surveys.check_out_id)' },
    'a check-out that does not exist is refused as the foreign key would',
  );
});
