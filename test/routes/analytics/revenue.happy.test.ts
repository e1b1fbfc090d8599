// Revenue on the demo data set: the envelope and its defaults, a full pagination walk, and totals
// that agree with PostgreSQL's own exact sums over the same check-outs.
import t from 'tap';
import { createDemoApp, firstCompanyView } from '../../helpers/demo.js';

// the clock at 2026-06-15T12:00Z (DEMO_NOW)
const { ctx, demo } = await createDemoApp(t);
const { company, headers, units, deleted, unitsReportingOn } = await firstCompanyView(ctx, demo, 'revenue', 'revenue happy');

interface CurrencyTotal {
  currency: string;
  total_revenue: number;
  paid_revenue: number;
  pending_revenue: number;
  check_outs: number;
}
interface RevenueRecord {
  cooling_unit_id: number;
  period_start: string;
  period_end: string;
  check_outs: number;
  currency_totals: CurrencyTotal[];
  payment_methods: { payment_method: string | null; currency: string; total_revenue: number; check_outs: number }[];
}
interface Body {
  data: RevenueRecord[];
  meta: { company_id: number; filters: Record<string, unknown>; pagination: Record<string, number | boolean> };
}

async function get(query: string): Promise<Body> {
  const response = await ctx.app.inject({ method: 'GET', url: `/api/v1/analytics/revenue?${query}`, headers });
  if (response.statusCode !== 200) throw new Error(`${query}: ${response.statusCode} ${response.body}`);
  return response.json() as Body;
}

const cents = (amount: number) => BigInt(Math.round(amount * 100));

t.test('defaults: the last 30 days by day, every filter echoed', async (t) => {
  const body = await get('');
  t.strictSame(Object.keys(body).sort(), ['data', 'meta']);
  t.equal(body.meta.company_id, company.id);
  t.strictSame(body.meta.filters, {
    start_date: '2026-05-17',
    end_date: '2026-06-15',
    period: 'day',
    cooling_unit_id: null,
    location_id: null,
    payment_status: 'all',
  });
  t.strictSame(body.meta.pagination, {
    page: 1,
    page_size: 100,
    total_count: 30 * units.length,
    total_pages: Math.ceil((30 * units.length) / 100),
    has_next: true,
    has_previous: false,
  });
  t.strictSame(
    body.data.slice(0, units.length).map((r) => [r.period_start, r.period_end, r.cooling_unit_id]),
    units.map((unit) => ['2026-05-17', '2026-05-17', unit]),
  );
  t.ok(
    body.data.some((r) => r.currency_totals.length > 1),
    'the demo has more than one currency in a day',
  );
  for (const record of body.data) {
    t.strictSame(
      record.currency_totals.map((c) => c.currency),
      record.currency_totals.map((c) => c.currency).sort(),
    );
    for (const total of record.currency_totals) {
      t.equal(cents(total.paid_revenue) + cents(total.pending_revenue), cents(total.total_revenue));
    }
  }
});

t.test('a pagination walk covers every (week, unit) once, in order, and agrees with SQL', async (t) => {
  const query = 'start_date=2026-03-01&end_date=2026-06-15&period=week&page_size=7';
  const records: RevenueRecord[] = [];
  let page = 1;
  for (;;) {
    const body = await get(`${query}&page=${page}`);
    t.equal(body.meta.pagination.has_previous, page > 1);
    records.push(...body.data);
    if (!body.meta.pagination.has_next) {
      t.equal(body.meta.pagination.total_pages, page);
      t.equal(body.meta.pagination.total_count, records.length);
      break;
    }
    t.equal(body.data.length, 7);
    page++;
  }
  const weeks = 17; // Sunday 03-01 (a clipped week), then the 16 Mondays 03-02 .. 06-15
  t.equal(new Set(records.map((r) => r.period_start)).size, weeks);
  t.ok(deleted.length > 0 && deleted.every((unit) => records.some((r) => r.cooling_unit_id === unit.id)), 'the deleted unit has records');
  t.equal(
    records.length,
    [...new Set(records.map((r) => r.period_start))].reduce((sum, week) => sum + unitsReportingOn(week), 0),
  );
  const keys = records.map((r) => `${r.period_start}/${String(r.cooling_unit_id).padStart(9, '0')}`);
  t.strictSame(keys, [...keys].sort(), 'ordered by period_start, then cooling_unit_id');
  t.equal(new Set(keys).size, keys.length, 'no record twice');
  t.strictSame((await get(`${query}&page=${page + 1}`)).data, [], 'a page past the last is empty');

  const { rows } = await ctx.db.pool.query<{ currency: string; total: string; paid: string; pending: string; n: number }>(
    `SELECT currency::text, sum(cooling_fees - discount)::text AS total,
            coalesce(sum(cooling_fees - discount) FILTER (WHERE paid), 0)::text AS paid,
            coalesce(sum(cooling_fees - discount) FILTER (WHERE NOT paid), 0)::text AS pending, count(*)::int AS n
     FROM check_outs WHERE cooling_unit_id = ANY($1) AND checked_out_at >= '2026-03-01' AND checked_out_at < '2026-06-16'
     GROUP BY 1 ORDER BY 1`,
    [[...units, ...deleted.map((unit) => unit.id)]],
  );
  t.ok(rows.length >= 2, 'two or more currencies');
  const totals = new Map<string, { total: bigint; paid: bigint; pending: bigint; n: number }>();
  for (const record of records) {
    for (const c of record.currency_totals) {
      const sum = totals.get(c.currency) ?? { total: 0n, paid: 0n, pending: 0n, n: 0 };
      sum.total += cents(c.total_revenue);
      sum.paid += cents(c.paid_revenue);
      sum.pending += cents(c.pending_revenue);
      sum.n += c.check_outs;
      totals.set(c.currency, sum);
    }
  }
  const exact = (text: string) => BigInt(text.replace('.', ''));
  t.strictSame(
    [...totals.entries()].sort(([x], [y]) => (x < y ? -1 : 1)).map(([currency, s]) => [currency, s.total, s.paid, s.pending, s.n]),
    rows.map((row) => [row.currency, exact(row.total), exact(row.paid), exact(row.pending), row.n]),
  );
});

t.test('payment methods add up to the paid revenue', async (t) => {
  const body = await get('period=month&page_size=1000');
  t.ok(body.data.length > 0);
  for (const record of body.data) {
    for (const total of record.currency_totals) {
      const methods = record.payment_methods.filter((m) => m.currency === total.currency);
      t.equal(
        methods.reduce((sum, m) => sum + cents(m.total_revenue), 0n),
        cents(total.paid_revenue),
      );
    }
  }
});

t.test('cooling_unit_id and payment_status narrow the records', async (t) => {
  const unit = units[1]!;
  const body = await get(`cooling_unit_id=${unit}&payment_status=paid`);
  t.equal(body.meta.pagination.total_count, 30);
  t.ok(body.data.every((r) => r.cooling_unit_id === unit));
  t.ok(body.data.every((r) => r.currency_totals.every((c) => c.pending_revenue === 0 && c.paid_revenue === c.total_revenue)));
  t.equal(body.meta.filters.cooling_unit_id, unit);
  t.equal(body.meta.filters.payment_status, 'paid');
});

t.test('the route is in the OpenAPI document', async (t) => {
  const response = await ctx.app.inject({ method: 'GET', url: '/openapi.json' });
  t.equal(response.statusCode, 200);
  t.ok((response.json() as { paths: Record<string, unknown> }).paths['/api/v1/analytics/revenue']);
});
