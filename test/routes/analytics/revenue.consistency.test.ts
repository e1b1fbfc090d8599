// A small revenue page is written by PostgreSQL (sql/queries/analytics-revenue.sql revenuePageJson),
// a large one rolled up in JavaScript (workers/rollups/revenue.ts): both must give the same JSON,
// byte for byte, for every period, payment status and page shape (pages across two buckets, a
// deleted unit, cells without check-outs, several currencies, methods and amounts of 0-2 decimals),
// and the route must answer small pages with that text. A sum beyond exact arithmetic is left to
// the rollup, which refuses it as before.
import t from 'tap';
import { gridPage } from '../../../src/analytics/query.js';
import { INLINE_BELOW_UNIT_DAYS, pageCellColumns, pageCells, pageDays } from '../../../src/analytics/rollups.js';
import { resolveWindow } from '../../../src/data-surface/window.js';
import { loadQueries } from '../../../src/db/sql.js';
import { rollUpFrom } from '../../../workers/rollups/index.js';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';
import { issueToken } from '../../helpers/tokens.js';

const sql = loadQueries('analytics-revenue', ['revenueCheckOuts', 'revenuePageJson']);
const ctx = await createTestApp(t);
ctx.clock.set(new Date('2026-03-15T12:00:00Z'));
const pool = ctx.db.pool;
const company = await createCompany(pool, 'Consistency');
await pool.query("UPDATE cooling_units SET deleted_at = '2026-02-10T00:00:00Z' WHERE id = $1", [company.deletedUnitId]);

// a small deterministic generator (mulberry32), so a failure reproduces
let seed = 20_260_315;
const next = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
  return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296;
};
const int = (max: number) => Math.floor(next() * max);
const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
const money = () => {
  const cents = pick([0, 1, 10, 99, 100, 12_345, 999_999, 123_456_789_012]) + int(5000);
  return pick([`${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`, `${Math.floor(cents / 100)}`, `${cents / 10}`]);
};
const units = [...company.unitIds, company.deletedUnitId];
const checkOuts = Array.from({ length: 600 }, () => {
  const fees = money();
  const paid = next() < 0.6;
  return {
    unit: pick(units),
    // 2026-01-20 .. 2026-02-28, any time of day
    at: new Date(Date.UTC(2026, 0, 20) + int(40 * 86_400_000)).toISOString(),
    currency: pick(['NGN', 'USD', 'EUR', 'KES']),
    fees,
    discount: pick(['0', fees, (Number(fees) / 2).toFixed(2)]),
    paid,
    method: paid ? pick([null, 'CASH', 'CREDIT_CARD', 'QR_CODE', 'BANK_TRANSFER', 'USSD', 'OPAY', 'UPI']) : null,
  };
});
await pool.query(
  `INSERT INTO check_outs (cooling_unit_id, farmer_id, checked_out_at, currency, cooling_fees, discount, paid, payment_method)
   SELECT * FROM unnest($1::int[], $2::int[], $3::timestamptz[], $4::text[], $5::numeric[], $6::numeric[], $7::bool[], $8::payment_method[])`,
  [
    checkOuts.map((c) => c.unit),
    checkOuts.map(() => company.farmerIds[0]),
    checkOuts.map((c) => c.at),
    checkOuts.map((c) => c.currency),
    checkOuts.map((c) => c.fees),
    checkOuts.map((c) => c.discount),
    checkOuts.map((c) => c.paid),
    checkOuts.map((c) => c.method),
  ],
);

const deletedAt = Date.UTC(2026, 1, 10);
const scope = {
  companyId: company.companyId,
  units: units.map((id) => ({ id, deletedAt: id === company.deletedUnitId ? deletedAt : null })).sort((a, b) => a.id - b.id),
};

/** The page's records both ways: PostgreSQL's text (null beyond exact sums) and the rollup's. */
async function bothWays(start: string, end: string, period: 'day' | 'week' | 'month', status: string, page: number, pageSize: number) {
  const grid = gridPage(resolveWindow({ start_date: start, end_date: end }, new Date()), period, scope, page, pageSize);
  if (grid.cells.length === 0) return null;
  const { days, periodStarts } = pageDays(grid);
  const cells = pageCellColumns(grid);
  const written = (
    await pool.query<{ beyond_exact: number; body: string }>(sql.revenuePageJson, [
      cells.unitIds,
      cells.periodStarts,
      cells.periodEnds,
      days,
      periodStarts,
      status,
    ])
  ).rows[0]!;
  const checkOuts = { text: sql.revenueCheckOuts, values: [grid.unitIds, days, periodStarts, status] };
  const rolledUp = await rollUpFrom({ kind: 'revenue', cells: pageCells(grid), checkOuts }, async (query) =>
    (await pool.query<{ rows: string }>(query.text, query.values)).rows.map((row) => row.rows),
  );
  return {
    written: written.beyond_exact > 0 ? null : `[${written.body}]`,
    rolledUp: rolledUp as string,
    unitDays: grid.unitIds.length * days.length,
  };
}

t.test('the page PostgreSQL writes is the rollup page, byte for byte', async (t) => {
  let pages = 0;
  for (const [start, end] of [
    ['2026-01-20', '2026-02-28'],
    ['2026-02-08', '2026-02-12'],
    ['2026-01-01', '2026-03-15'],
  ] as const) {
    for (const period of ['day', 'week', 'month'] as const) {
      for (const status of ['all', 'paid', 'pending']) {
        for (const pageSize of [1, 3, 5, 7, 100]) {
          for (const page of [1, 2, 3, 6, 11]) {
            const both = await bothWays(start, end, period, status, page, pageSize);
            if (!both) continue;
            pages++;
            if (both.written !== both.rolledUp) {
              t.equal(both.written, both.rolledUp, `${start}..${end} ${period} ${status} page ${page} of ${pageSize}`);
              return;
            }
          }
        }
      }
    }
  }
  t.ok(pages > 300, `${pages} pages compared`);
});

t.test('the route answers a small page with the text PostgreSQL writes', async (t) => {
  const { headers } = await issueToken(ctx, company.employeeId, { scopes: ['revenue'] });
  const query = 'start_date=2026-02-08&end_date=2026-02-12&period=day&page=2&page_size=7&payment_status=paid';
  const response = await ctx.app.inject({ method: 'GET', url: `/api/v1/analytics/revenue?${query}`, headers });
  t.equal(response.statusCode, 200);
  const both = (await bothWays('2026-02-08', '2026-02-12', 'day', 'paid', 2, 7))!;
  t.ok(both.unitDays < INLINE_BELOW_UNIT_DAYS, 'a page PostgreSQL writes');
  t.ok(response.body.startsWith(`{"data":${both.written},"meta":`), 'the records as written');
});

t.test('sums beyond exact arithmetic are left to the rollup', async (t) => {
  // 91 check-outs of 999,999,999,999.99: 9.1e15 cents, past 2^53, in one cell
  const unit = company.unitIds[0]!;
  await pool.query(
    `INSERT INTO check_outs (cooling_unit_id, farmer_id, checked_out_at, currency, cooling_fees, paid)
     SELECT $1, $2, '2026-03-01T10:00:00Z', 'NGN', 999999999999.99, true FROM generate_series(1, 91)`,
    [unit, company.farmerIds[0]],
  );
  const both = await bothWays('2026-03-01', '2026-03-01', 'day', 'all', 1, 10).catch((error: Error) => error);
  t.type(both, RangeError, 'the rollup refuses the page');
  const grid = gridPage(resolveWindow({ start_date: '2026-03-01', end_date: '2026-03-01' }, new Date()), 'day', scope, 1, 10);
  const { days, periodStarts } = pageDays(grid);
  const cells = pageCellColumns(grid);
  const { rows } = await pool.query<{ beyond_exact: number }>(sql.revenuePageJson, [
    cells.unitIds,
    cells.periodStarts,
    cells.periodEnds,
    days,
    periodStarts,
    'all',
  ]);
  t.equal(rows[0]!.beyond_exact, 1, 'PostgreSQL flags the one currency total');
});
