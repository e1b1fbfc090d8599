// docs/figures.md, "Rounding": every figure is computed exactly and rounded once, at the end.
// utilization_rate, average_crates_in_storage and market_loss_share to 4 decimals, half up;
// crates_checked_out and the impact figures in kg and money to 2 decimals, half away from zero;
// community_served to a whole person, half up. Each case below sits exactly on a half, where a
// float computation or a second rounding would go the other way.
import t from 'tap';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';
import { issueToken } from '../../helpers/tokens.js';

const ctx = await createTestApp(t);
ctx.clock.set(new Date('2026-03-15T12:00:00Z'));
const pool = ctx.db.pool;
const company = await createCompany(pool, 'Rounding'); // NG: household 4.7
await pool.query("UPDATE cooling_units SET deleted_at = '2026-01-01T00:00:00Z' WHERE deleted");
const [unitA, unitB, unitC] = company.unitIds as [number, number, number];
const [f1, f2] = company.farmerIds as [number, number];
const one = async (sql: string, params: unknown[]) => (await pool.query<{ id: string }>(sql, params)).rows[0]!.id;
await pool.query('UPDATE cooling_units SET capacity_crates = 3 WHERE id = $1', [unitB]);
const crop = await one(
  "INSERT INTO crops (name, emission_factor_without_cooling, emission_factor_with_cooling) VALUES ('Yam', 0.5, 0) RETURNING id",
  [],
);
await pool.query(
  "INSERT INTO baseline_surveys (farmer_id, loss_share, currency, average_price_per_kg, surveyed_at) VALUES ($1, 0.5, 'NGN', 1.00, '2026-01-01T00:00:00Z')",
  [f1],
);

async function stay(unit: number, farmer: number, from: string, kg: string[], until?: string) {
  const checkIn = await one('INSERT INTO check_ins (cooling_unit_id, farmer_id, checked_in_at) VALUES ($1, $2, $3) RETURNING id', [
    unit,
    farmer,
    from,
  ]);
  await pool.query(
    'INSERT INTO crates (check_in_id, cooling_unit_id, crop_id, initial_weight_kg, fully_checked_out_at) SELECT $1, $2, $3, unnest($4::numeric[]), $5',
    [checkIn, unit, crop, kg, until ?? null],
  );
}
async function survey(unit: number, farmer: number, at: string, price: string, sold: string, lost: string) {
  const checkOut = await one(
    "INSERT INTO check_outs (cooling_unit_id, farmer_id, checked_out_at, currency, cooling_fees, paid) VALUES ($1, $2, $3, 'NGN', 1, true) RETURNING id",
    [unit, farmer, at],
  );
  await pool.query(
    `INSERT INTO market_surveys (check_out_id, crop_id, currency, selling_price_per_unit, kg_per_unit, kg_sold, kg_lost, surveyed_at)
     VALUES ($1, $2, 'NGN', $3, 1, $4, $5, $6)`,
    [checkOut, crop, price, sold, lost, at],
  );
  return checkOut;
}

const { headers } = await issueToken(ctx, company.employeeId, { scopes: ['utilization', 'impact'] });
async function record(endpoint: string, unit: number, day: string) {
  const response = await ctx.app.inject({
    method: 'GET',
    url: `/api/v1/analytics/${endpoint}?start_date=${day}&end_date=${day}&cooling_unit_id=${unit}`,
    headers,
  });
  if (response.statusCode !== 200) throw new Error(`${endpoint}: ${response.statusCode} ${response.body}`);
  return (response.json() as { data: Record<string, unknown>[] }).data[0]!;
}

t.test('utilization_rate and average_crates_in_storage: 4 decimals, half up, from the exact quotient', async (t) => {
  // A (100 crates), 03-01: one crate for 432 s of the day's 86,400: 0.005 crates, a rate of 0.00005 exactly
  await stay(unitA, f1, '2026-03-01T00:00:00Z', ['10.00'], '2026-03-01T00:07:12Z');
  t.match(await record('utilization', unitA, '2026-03-01'), { average_crates_in_storage: 0.005, utilization_rate: 0.0001 });
  // B (3 crates), 03-01: one crate for an hour: 1/24 = 0.041666... crates, 1/72 = 0.013888...
  await stay(unitB, f1, '2026-03-01T06:00:00Z', ['10.00'], '2026-03-01T07:00:00Z');
  t.match(await record('utilization', unitB, '2026-03-01'), { average_crates_in_storage: 0.0417, utilization_rate: 0.0139 });
});

t.test('crates_checked_out: 2 decimals, half up; kg exact', async (t) => {
  // an eighth of a crate leaves A on 03-02: 0.125 crates
  const crateId = (await pool.query<{ id: string }>('SELECT id FROM crates WHERE cooling_unit_id = $1', [unitA])).rows[0]!.id;
  const checkOut = await one(
    "INSERT INTO check_outs (cooling_unit_id, farmer_id, checked_out_at, currency, cooling_fees) VALUES ($1, $2, '2026-03-02T10:00:00Z', 'NGN', 1) RETURNING id",
    [unitA, f1],
  );
  await pool.query(
    'INSERT INTO crate_check_outs (check_out_id, crate_id, percentage, weight_kg, days_stored) VALUES ($1, $2, 12.50, 1.25, 1)',
    [checkOut, crateId],
  );
  t.match(await record('utilization', unitA, '2026-03-02'), { check_outs: 1, crates_checked_out: 0.13, kg_checked_out: 1.25 });
});

t.test('impact: community_served to a whole person, half up; kg and share exact until the end', async (t) => {
  // C, 03-02: 15 farmers each check in one crate of 0.01 kg (f2 among them reports 1 kg lost of 32)
  const farmers = [f1, f2];
  for (let i = 3; i <= 15; i++) {
    farmers.push(
      Number(
        await one("INSERT INTO users (role, company_id, first_name, user_code) VALUES ('FARMER', $1, 'F', $2) RETURNING id", [
          company.companyId,
          `R-F${i}`,
        ]),
      ),
    );
  }
  for (const farmer of farmers) await stay(unitC, farmer, '2026-03-02T08:00:00Z', ['0.01']);
  await survey(unitC, f2, '2026-03-02T16:00:00Z', '1.00', '31.00', '1.00');
  t.match(await record('impact', unitC, '2026-03-02'), {
    farmers_served: 15,
    community_served: 71, // 15 x 4.7 = 70.5
    kg_checked_in: 0.15,
    co2_reduction_kg: 0.08, // 15 x 0.01 x 0.5 = 0.075
    market_loss_share: 0.0313, // 1/32 = 0.03125
  });
});

t.test('impact: food loss prevented and income increase to 2 decimals, half away from zero', async (t) => {
  // C, 03-03: f1 (baseline loss 0.5, 1.00 per kg) checks in 0.02 kg; two surveys: 0.50 kg sold at
  // 0.99 per kg, and 2.50 sold with 1.00 lost at 1.00: pooled loss 1/4
  await stay(unitC, f1, '2026-03-03T08:00:00Z', ['0.02']);
  await survey(unitC, f1, '2026-03-03T15:00:00Z', '0.99', '0.50', '0');
  await survey(unitC, f1, '2026-03-03T16:00:00Z', '1.00', '2.50', '1.00');
  t.match(await record('impact', unitC, '2026-03-03'), {
    market_loss_share: 0.25,
    food_loss_prevented_kg: 0.01, // 0.02 x (0.5 - 0.25) = 0.005
    income_increase: -0.01, // (0.99 - 1.00) x 0.50 = -0.005, away from zero
    co2_reduction_kg: 0.01,
    community_served: 5, // 4.7
  });
});
