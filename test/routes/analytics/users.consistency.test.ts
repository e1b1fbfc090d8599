// GET /api/v1/analytics/users on the demo data set (thousands of movements, several companies,
// farmers using units of other companies, deleted units) against a naive recount in JavaScript of
// the same definitions (docs/figures.md), for every period, a restricted token and a filter.
import t from 'tap';
import { bucketsOf, formatDay, parseDay, type Period } from '../../../src/data-surface/window.js';
import { createDemoApp } from '../../helpers/demo.js';
import { URL_BASE, type UsersJson, type UsersRecordJson } from './users.world.js';

const DAY_MS = 86_400_000;
// the clock at 2026-06-15T12:00Z (DEMO_NOW)
const { ctx, demo } = await createDemoApp(t);
const pool = ctx.db.pool;

interface Farmer {
  id: number;
  registered_by: number | null;
  joined: number;
}
interface Movement {
  unit: number;
  farmer: number;
  at: number;
  check_in: boolean;
}
const farmers = (
  await pool.query<{ id: number; registered_by: number | null; joined: string }>(
    "SELECT id, registered_by, (extract(epoch FROM date_joined) * 1000)::float8::text AS joined FROM users WHERE role = 'FARMER'",
  )
).rows.map((row): Farmer => ({ id: row.id, registered_by: row.registered_by, joined: Number(row.joined) }));
const assignments = (await pool.query<{ operator_id: number; cooling_unit_id: number }>('SELECT * FROM operator_assignments')).rows;
const movements = (
  await pool.query<{ unit: number; farmer: number; at: string; check_in: boolean }>(
    `SELECT cooling_unit_id AS unit, farmer_id AS farmer, (extract(epoch FROM checked_in_at) * 1000)::float8::text AS at, true AS check_in FROM check_ins
     UNION ALL
     SELECT cooling_unit_id, farmer_id, (extract(epoch FROM checked_out_at) * 1000)::float8::text, false FROM check_outs`,
  )
).rows.map((row): Movement => ({ ...row, at: Number(row.at) }));

const deletedAt = new Map(
  (await pool.query<{ id: number; deleted_at: Date }>('SELECT id, deleted_at FROM cooling_units WHERE deleted')).rows.map((row) => [
    row.id,
    row.deleted_at.getTime(),
  ]),
);

/**
 * The documented definitions (docs/figures.md, "users"), counted one farmer and one movement at a
 * time: the population over every unit of the request, a deleted unit's movements and breakdown
 * entry only in the buckets that began before its deletion.
 */
function recount(units: number[], start: string, end: string, period: Period): UsersRecordJson[] {
  const scope = new Set(units);
  const reportsOn = (unit: number, bucketStart: number) => !deletedAt.has(unit) || bucketStart < deletedAt.get(unit)!;
  const operatorsOfScope = new Set(assignments.filter((row) => scope.has(row.cooling_unit_id)).map((row) => row.operator_id));
  const checkedIn = new Set(movements.filter((m) => m.check_in && scope.has(m.unit)).map((m) => m.farmer));
  const population = farmers.filter(
    (farmer) => (farmer.registered_by !== null && operatorsOfScope.has(farmer.registered_by)) || checkedIn.has(farmer.id),
  );
  return bucketsOf({ start: parseDay(start), end: parseDay(end) }, period).map((bucket) => {
    const from = bucket.start;
    const to = bucket.end + DAY_MS;
    const inside = movements.filter((m) => scope.has(m.unit) && reportsOn(m.unit, from) && m.at >= from && m.at < to);
    return {
      period_start: formatDay(bucket.start),
      period_end: formatDay(bucket.end),
      registered_users: population.filter((farmer) => farmer.joined < to).length,
      active_users: new Set(inside.map((m) => m.farmer)).size,
      sign_ups: population.filter((farmer) => farmer.joined >= from && farmer.joined < to).length,
      by_cooling_unit: units
        .filter((unit) => reportsOn(unit, from))
        .sort((x, y) => x - y)
        .map((unit) => {
          const here = inside.filter((m) => m.unit === unit);
          return {
            cooling_unit_id: unit,
            active_users: new Set(here.map((m) => m.farmer)).size,
            check_ins: here.filter((m) => m.check_in).length,
            check_outs: here.filter((m) => !m.check_in).length,
          };
        }),
    };
  });
}

async function readAll(authorization: string, query: string): Promise<UsersRecordJson[]> {
  const response = await ctx.app.inject({ method: 'GET', url: `${URL_BASE}?${query}&page_size=1000`, headers: { authorization } });
  if (response.statusCode !== 200) throw new Error(`${query}: ${response.statusCode} ${response.body}`);
  return response.json<UsersJson>().data;
}

t.ok(movements.length > 1000, `the demo data set has movements to count (${movements.length})`);

for (const company of demo.companies) {
  t.test(company.name, async (t) => {
    const create = async (coolingUnitIds: number[]) => {
      const response = await ctx.app.inject({
        method: 'POST',
        url: '/api/v1/api-tokens',
        headers: { authorization: `Bearer ${company.employee_jwt}` },
        payload: { name: 'consistency', scopes: ['users'], cooling_unit_ids: coolingUnitIds },
      });
      return `Bearer ${response.json<{ token: string }>().token}`;
    };
    const companyWide = await create([]);
    const units = company.cooling_unit_ids;
    t.ok(company.deleted_cooling_unit_ids.length > 0, 'the demo deletes a unit of every company');
    const window = { start: '2025-06-15', end: '2026-06-15' };
    for (const period of ['day', 'week', 'month'] as const) {
      const records = await readAll(companyWide, `start_date=${window.start}&end_date=${window.end}&period=${period}`);
      t.same(
        records,
        recount([...units, ...company.deleted_cooling_unit_ids], window.start, window.end, period),
        `company-wide, by ${period}`,
      );
    }
    const pair = units.slice(0, 2);
    const restricted = await create(pair);
    t.same(await readAll(restricted, 'period=week'), recount(pair, '2026-05-17', '2026-06-15', 'week'), 'restricted to two units');
    const one = units[units.length - 1]!;
    t.same(
      await readAll(companyWide, `cooling_unit_id=${one}&period=day`),
      recount([one], '2026-05-17', '2026-06-15', 'day'),
      'one unit by filter',
    );
  });
}
