// Impact on the demo data set: the envelope and its defaults, a full pagination walk, and figures
// that agree with PostgreSQL over the same rows.
import t from 'tap';
import type { ImpactPageJson } from '../../../src/routes/analytics/impact.js';
import { createDemoApp, firstCompanyView } from '../../helpers/demo.js';

// the clock at 2026-06-15T12:00Z (DEMO_NOW)
const { ctx, demo } = await createDemoApp(t);
const { company, headers, units, deleted, unitsReportingOn } = await firstCompanyView(ctx, demo, 'impact', 'impact happy');

type Body = ImpactPageJson;

async function get(query: string): Promise<Body> {
  const response = await ctx.app.inject({ method: 'GET', url: `/api/v1/analytics/impact?${query}`, headers });
  if (response.statusCode !== 200) throw new Error(`${query}: ${response.statusCode} ${response.body}`);
  return response.json() as Body;
}

t.test('defaults: the last 30 days by day, every filter echoed', async (t) => {
  const body = await get('');
  t.equal(body.meta.company_id, company.id);
  t.strictSame(body.meta.filters, {
    start_date: '2026-05-17',
    end_date: '2026-06-15',
    period: 'day',
    cooling_unit_id: null,
    location_id: null,
  });
  t.match(body.meta.pagination, { page: 1, page_size: 100, total_count: 30 * units.length, has_next: true, has_previous: false });
  t.strictSame(Object.keys(body.data[0]!).sort(), [
    'co2_reduction_kg',
    'community_served',
    'cooling_unit_id',
    'currency',
    'farmers_served',
    'food_loss_prevented_kg',
    'income_increase',
    'kg_checked_in',
    'market_loss_share',
    'market_surveys',
    'period_end',
    'period_start',
  ]);
  for (const record of body.data) {
    t.equal(record.currency, 'NGN');
    t.ok(record.food_loss_prevented_kg >= 0);
    t.equal(record.community_served, Math.round(record.farmers_served * 4.7));
    t.equal(record.market_loss_share === null, record.market_surveys === 0);
    if (record.market_surveys === 0) t.equal(record.food_loss_prevented_kg, 0);
  }
  t.ok(
    body.data.some((r) => r.food_loss_prevented_kg > 0 && r.income_increase !== 0),
    'the demo shows an impact',
  );
});

t.test('a pagination walk covers every (month, unit) once, in order, and agrees with SQL', async (t) => {
  const query = 'start_date=2025-07-01&end_date=2026-06-15&period=month&page_size=5';
  const records: Body['data'] = [];
  for (let page = 1; ; page++) {
    const body = await get(`${query}&page=${page}`);
    t.equal(body.meta.pagination.has_previous, page > 1);
    records.push(...body.data);
    if (!body.meta.pagination.has_next) break;
  }
  t.ok(deleted.length > 0 && deleted.every((unit) => records.some((r) => r.cooling_unit_id === unit.id)), 'the deleted unit has records');
  const months = [...new Set(records.map((r) => r.period_start))];
  t.equal(months.length, 12);
  t.equal(
    records.length,
    months.reduce((sum, month) => sum + unitsReportingOn(month), 0),
  );
  const keys = records.map((r) => `${r.period_start}/${String(r.cooling_unit_id).padStart(9, '0')}`);
  t.strictSame(keys, [...keys].sort(), 'ordered by period_start, then cooling_unit_id');
  t.equal(new Set(keys).size, keys.length);
  t.equal(records.at(-1)!.period_end, '2026-06-15', 'the last month is clipped to the window');

  const { rows } = await ctx.db.pool.query<{ kg: string; surveys: number; co2: string }>(
    `SELECT (SELECT sum(c.initial_weight_kg)::text FROM crates c JOIN check_ins ci ON ci.id = c.check_in_id
              WHERE ci.cooling_unit_id = ANY($1) AND ci.checked_in_at >= '2025-07-01' AND ci.checked_in_at < '2026-06-16') AS kg,
            (SELECT count(*)::int FROM market_surveys ms JOIN check_outs co ON co.id = ms.check_out_id
              WHERE co.cooling_unit_id = ANY($1) AND ms.surveyed_at >= '2025-07-01' AND ms.surveyed_at < '2026-06-16') AS surveys,
            (SELECT sum(c.initial_weight_kg * (cr.emission_factor_without_cooling - cr.emission_factor_with_cooling))::text
              FROM crates c JOIN check_ins ci ON ci.id = c.check_in_id JOIN crops cr ON cr.id = c.crop_id
              WHERE ci.cooling_unit_id = ANY($1) AND ci.checked_in_at >= '2025-07-01' AND ci.checked_in_at < '2026-06-16') AS co2`,
    [[...units, ...deleted.map((unit) => unit.id)]],
  );
  const sql = rows[0]!;
  t.equal(
    records.reduce((sum, r) => sum + BigInt(Math.round(r.kg_checked_in * 100)), 0n),
    BigInt(sql.kg.replace('.', '')),
  );
  t.equal(
    records.reduce((sum, r) => sum + r.market_surveys, 0),
    sql.surveys,
  );
  // each record rounds its CO2 to 2 decimals: the sum is within half a hundredth per record
  const co2 = records.reduce((sum, r) => sum + r.co2_reduction_kg, 0);
  t.ok(Math.abs(co2 - Number(sql.co2)) <= 0.005 * records.length, `${co2} ~ ${sql.co2}`);
});

t.test('farmers_served counts distinct farmers with a check-in or check-out', async (t) => {
  const unit = units[0]!;
  const body = await get(`cooling_unit_id=${unit}&start_date=2026-06-01&end_date=2026-06-14&period=week`);
  t.equal(body.data.length, 2);
  for (const record of body.data) {
    const { rows } = await ctx.db.pool.query<{ n: number }>(
      `SELECT count(DISTINCT farmer_id)::int AS n FROM (
         SELECT farmer_id FROM check_ins WHERE cooling_unit_id = $1 AND checked_in_at >= $2::date AND checked_in_at < $3::date + 1
         UNION ALL
         SELECT farmer_id FROM check_outs WHERE cooling_unit_id = $1 AND checked_out_at >= $2::date AND checked_out_at < $3::date + 1) m`,
      [unit, record.period_start, record.period_end],
    );
    t.equal(record.farmers_served, rows[0]!.n);
    t.ok(record.farmers_served > 0);
  }
});
