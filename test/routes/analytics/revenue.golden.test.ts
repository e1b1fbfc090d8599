// Revenue figures on a small hand-built data set: every number below is computed by hand from the
// rows inserted here, including exactness cases a float sum gets wrong (0.1 + 0.2, 100 x 0.01,
// amounts near numeric(14,2)'s maximum).
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
const a = await createCompany(pool, 'Golden A');
const b = await createCompany(pool, 'Golden B', 'IN', 'INR');
const [u1, u2, u3] = a.unitIds as [number, number, number];
const farmer = a.farmerIds[0]!;

async function checkOut(
  unit: number,
  at: string,
  currency: string,
  fees: string,
  discount: string,
  method: string | null,
  paid = method !== null,
) {
  await pool.query(
    `INSERT INTO check_outs (cooling_unit_id, farmer_id, checked_out_at, currency, cooling_fees, discount, paid, payment_method, paid_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, CASE WHEN $7 THEN $3::timestamptz END)`,
    [unit, farmer, at, currency, fees, discount, paid, method],
  );
}

// U1, 2025-03-01
await checkOut(u1, '2025-03-01T08:00:00Z', 'NGN', '1000.00', '100.00', 'CASH');
await checkOut(u1, '2025-03-01T09:00:00Z', 'NGN', '500.50', '0', 'BANK_TRANSFER');
await checkOut(u1, '2025-03-01T10:00:00Z', 'NGN', '250.25', '0.25', null);
await checkOut(u1, '2025-03-01T23:59:59.999Z', 'NGN', '0.01', '0', 'CASH');
await checkOut(u1, '2025-03-01T11:00:00Z', 'USD', '0.10', '0', 'CASH');
await checkOut(u1, '2025-03-01T12:00:00Z', 'USD', '0.20', '0', 'CASH');
await checkOut(u1, '2025-03-01T13:00:00Z', 'USD', '12.00', '2.00', null);
// U1, 2025-03-02: a hundred one-cent payments and a pending one at midnight sharp
await pool.query(
  `INSERT INTO check_outs (cooling_unit_id, farmer_id, checked_out_at, currency, cooling_fees, paid, payment_method, paid_at)
   SELECT $1, $2, '2025-03-02T06:00:00Z'::timestamptz + n * interval '1 minute', 'NGN', 0.01, true, 'USSD', now()
   FROM generate_series(1, 100) AS n`,
  [u1, farmer],
);
await checkOut(u1, '2025-03-02T00:00:00Z', 'NGN', '10.00', '0', null);
// U2: nothing on 03-01; on 03-02 a paid check-out without a recorded method, and OPAY
await checkOut(u2, '2025-03-02T08:00:00Z', 'NGN', '5.00', '0', null, true);
await checkOut(u2, '2025-03-02T09:00:00Z', 'NGN', '7.00', '0', 'OPAY');
// U3: three near-maximum amounts on 03-02 (2,999,999,999,999.97 needs exact cents); others outside the window
for (let i = 0; i < 3; i++) await checkOut(u3, '2025-03-02T10:00:00Z', 'EUR', '999999999999.99', '0', 'BANK_TRANSFER');
await checkOut(u3, '2025-02-28T23:59:59Z', 'NGN', '50.00', '0', 'CASH');
await checkOut(u3, '2025-03-03T00:00:00Z', 'NGN', '60.00', '0', 'CASH');
// never visible to company A's token: another company, and a unit deleted before the window (a
// deleted unit reports only on the periods that began before its deletion: deleted-units.golden.test.ts)
await pool.query("UPDATE cooling_units SET deleted_at = '2025-02-15T00:00:00Z' WHERE deleted");
await checkOut(a.deletedUnitId, '2025-03-01T08:00:00Z', 'NGN', '70.00', '0', 'CASH');
await pool.query(
  `INSERT INTO check_outs (cooling_unit_id, farmer_id, checked_out_at, currency, cooling_fees, paid, payment_method)
   VALUES ($1, $2, '2025-03-01T08:00:00Z', 'INR', 80.00, true, 'UPI')`,
  [b.unitIds[0], b.farmerIds[0]],
);

const token = await issueToken(ctx, a.employeeId, { scopes: ['revenue'] });
const window = 'start_date=2025-03-01&end_date=2025-03-02';

async function revenue(query: string) {
  const response = await ctx.app.inject({ method: 'GET', url: `/api/v1/analytics/revenue?${query}`, headers: token.headers });
  if (response.statusCode !== 200) throw new Error(`${query}: ${response.statusCode} ${response.body}`);
  return response.json() as { data: Record<string, unknown>[]; meta: Record<string, unknown> };
}

const none = { check_outs: 0, currency_totals: [], payment_methods: [] };

t.test('payment_status=all (the default), by day', async (t) => {
  const body = await revenue(window);
  t.strictSame(body.data, [
    {
      cooling_unit_id: u1,
      period_start: '2025-03-01',
      period_end: '2025-03-01',
      check_outs: 7,
      currency_totals: [
        {
          currency: 'NGN',
          total_revenue: 1650.51,
          paid_revenue: 1400.51,
          pending_revenue: 250,
          cooling_fees: 1750.76,
          discounts: 100.25,
          check_outs: 4,
          paid_check_outs: 3,
          pending_check_outs: 1,
        },
        {
          currency: 'USD',
          total_revenue: 10.3,
          paid_revenue: 0.3,
          pending_revenue: 10,
          cooling_fees: 12.3,
          discounts: 2,
          check_outs: 3,
          paid_check_outs: 2,
          pending_check_outs: 1,
        },
      ],
      payment_methods: [
        { payment_method: 'BANK_TRANSFER', currency: 'NGN', total_revenue: 500.5, check_outs: 1 },
        { payment_method: 'CASH', currency: 'NGN', total_revenue: 900.01, check_outs: 2 },
        { payment_method: 'CASH', currency: 'USD', total_revenue: 0.3, check_outs: 2 },
      ],
    },
    { cooling_unit_id: u2, period_start: '2025-03-01', period_end: '2025-03-01', ...none },
    { cooling_unit_id: u3, period_start: '2025-03-01', period_end: '2025-03-01', ...none },
    {
      cooling_unit_id: u1,
      period_start: '2025-03-02',
      period_end: '2025-03-02',
      check_outs: 101,
      currency_totals: [
        {
          currency: 'NGN',
          total_revenue: 11,
          paid_revenue: 1,
          pending_revenue: 10,
          cooling_fees: 11,
          discounts: 0,
          check_outs: 101,
          paid_check_outs: 100,
          pending_check_outs: 1,
        },
      ],
      payment_methods: [{ payment_method: 'USSD', currency: 'NGN', total_revenue: 1, check_outs: 100 }],
    },
    {
      cooling_unit_id: u2,
      period_start: '2025-03-02',
      period_end: '2025-03-02',
      check_outs: 2,
      currency_totals: [
        {
          currency: 'NGN',
          total_revenue: 12,
          paid_revenue: 12,
          pending_revenue: 0,
          cooling_fees: 12,
          discounts: 0,
          check_outs: 2,
          paid_check_outs: 2,
          pending_check_outs: 0,
        },
      ],
      payment_methods: [
        { payment_method: 'OPAY', currency: 'NGN', total_revenue: 7, check_outs: 1 },
        { payment_method: null, currency: 'NGN', total_revenue: 5, check_outs: 1 },
      ],
    },
    {
      cooling_unit_id: u3,
      period_start: '2025-03-02',
      period_end: '2025-03-02',
      check_outs: 3,
      currency_totals: [
        {
          currency: 'EUR',
          total_revenue: 2999999999999.97,
          paid_revenue: 2999999999999.97,
          pending_revenue: 0,
          cooling_fees: 2999999999999.97,
          discounts: 0,
          check_outs: 3,
          paid_check_outs: 3,
          pending_check_outs: 0,
        },
      ],
      payment_methods: [{ payment_method: 'BANK_TRANSFER', currency: 'EUR', total_revenue: 2999999999999.97, check_outs: 3 }],
    },
  ]);
  t.equal((body.meta.filters as { payment_status: string }).payment_status, 'all');
  // the exactness cases, spelled out: float sums would give 0.30000000000000004 and 1.0000000000000007
  t.equal(0.1 + 0.2 === 0.3, false);
  t.equal(JSON.stringify(body.data[0]!.payment_methods).includes('"total_revenue":0.3,'), true);
});

t.test('payment_status=paid counts paid check-outs only', async (t) => {
  const body = await revenue(`${window}&payment_status=paid&cooling_unit_id=${u1}`);
  t.strictSame(body.data[0]!.currency_totals, [
    {
      currency: 'NGN',
      total_revenue: 1400.51,
      paid_revenue: 1400.51,
      pending_revenue: 0,
      cooling_fees: 1500.51,
      discounts: 100,
      check_outs: 3,
      paid_check_outs: 3,
      pending_check_outs: 0,
    },
    {
      currency: 'USD',
      total_revenue: 0.3,
      paid_revenue: 0.3,
      pending_revenue: 0,
      cooling_fees: 0.3,
      discounts: 0,
      check_outs: 2,
      paid_check_outs: 2,
      pending_check_outs: 0,
    },
  ]);
  t.equal(body.data[0]!.check_outs, 5);
  t.strictSame(body.data[1]!.currency_totals, [
    {
      currency: 'NGN',
      total_revenue: 1,
      paid_revenue: 1,
      pending_revenue: 0,
      cooling_fees: 1,
      discounts: 0,
      check_outs: 100,
      paid_check_outs: 100,
      pending_check_outs: 0,
    },
  ]);
  t.equal((body.meta.filters as { payment_status: string }).payment_status, 'paid');
});

t.test('payment_status=pending counts unpaid check-outs only, with no payment methods', async (t) => {
  const body = await revenue(`${window}&payment_status=pending&cooling_unit_id=${u1}`);
  t.strictSame(body.data[0]!.currency_totals, [
    {
      currency: 'NGN',
      total_revenue: 250,
      paid_revenue: 0,
      pending_revenue: 250,
      cooling_fees: 250.25,
      discounts: 0.25,
      check_outs: 1,
      paid_check_outs: 0,
      pending_check_outs: 1,
    },
    {
      currency: 'USD',
      total_revenue: 10,
      paid_revenue: 0,
      pending_revenue: 10,
      cooling_fees: 12,
      discounts: 2,
      check_outs: 1,
      paid_check_outs: 0,
      pending_check_outs: 1,
    },
  ]);
  t.strictSame(body.data[0]!.payment_methods, []);
  t.strictSame(body.data[1]!.currency_totals, [
    {
      currency: 'NGN',
      total_revenue: 10,
      paid_revenue: 0,
      pending_revenue: 10,
      cooling_fees: 10,
      discounts: 0,
      check_outs: 1,
      paid_check_outs: 0,
      pending_check_outs: 1,
    },
  ]);
});

t.test('a month bucket sums its days; a week bucket is clipped to the window', async (t) => {
  const month = await revenue(`${window}&period=month&cooling_unit_id=${u1}`);
  t.equal(month.data.length, 1);
  t.match(month.data[0], { period_start: '2025-03-01', period_end: '2025-03-02', check_outs: 108 });
  t.strictSame(
    (month.data[0]!.currency_totals as { currency: string; total_revenue: number }[]).map((c) => [c.currency, c.total_revenue]),
    [
      ['NGN', 1661.51],
      ['USD', 10.3],
    ],
  );
  // 2025-03-01 is a Saturday: the ISO week from Monday 2025-02-24 is clipped to 03-01..03-02
  const week = await revenue(`start_date=2025-02-27&end_date=2025-03-03&period=week&cooling_unit_id=${u3}`);
  t.strictSame(
    week.data.map((r) => [r.period_start, r.period_end]),
    [
      ['2025-02-27', '2025-03-02'],
      ['2025-03-03', '2025-03-03'],
    ],
  );
  t.strictSame(
    (week.data[0]!.currency_totals as { currency: string; total_revenue: number }[]).map((c) => [c.currency, c.total_revenue]),
    [
      ['EUR', 2999999999999.97],
      ['NGN', 50],
    ],
  );
  t.strictSame(
    (week.data[1]!.currency_totals as { currency: string; total_revenue: number }[]).map((c) => [c.currency, c.total_revenue]),
    [['NGN', 60]],
  );
});

t.test("another company's figures stay with it", async (t) => {
  const tokenB = await issueToken(ctx, b.employeeId, { scopes: ['revenue'] });
  const response = await ctx.app.inject({
    method: 'GET',
    url: `/api/v1/analytics/revenue?${window}&period=month`,
    headers: tokenB.headers,
  });
  const records = (response.json() as { data: { cooling_unit_id: number; currency_totals: unknown[] }[] }).data;
  t.strictSame(
    records.map((r) => r.cooling_unit_id),
    b.unitIds,
  );
  t.strictSame(records[0]!.currency_totals, [
    {
      currency: 'INR',
      total_revenue: 80,
      paid_revenue: 80,
      pending_revenue: 0,
      cooling_fees: 80,
      discounts: 0,
      check_outs: 1,
      paid_check_outs: 1,
      pending_check_outs: 0,
    },
  ]);
});
