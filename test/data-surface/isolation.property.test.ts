// Property: whatever the token (scopes, unit restriction) and whatever the filters, a data
// response never holds a record of another company or of a unit outside the token; a missing
// scope is 403, an unreadable unit 404, and nothing is ever a 5xx. Seeded, so failures replay.
import t from 'tap';
import { createRandom } from '../../src/seed/random.js';
import { createDemoApp } from '../helpers/demo.js';
import { issueToken } from '../helpers/tokens.js';

const ITERATIONS = Number(process.env.PROPERTY_ITERATIONS ?? 100);
const { ctx, demo } = await createDemoApp(t);
const random = createRandom(Number(process.env.PROPERTY_SEED ?? 4242));
const endpoints = [
  ['users', 'users'],
  ['utilization', 'utilization'],
  ['revenue', 'revenue'],
  ['impact', 'impact'],
] as const;
const scopes = ['users', 'utilization', 'revenue', 'impact', 'sensor_data'];
const allUnits = demo.companies.flatMap((company) => [...company.cooling_unit_ids, ...company.deleted_cooling_unit_ids]);
const allLocations = demo.companies.flatMap((company) => company.location_ids);
const employeeOf = async (companyId: number) =>
  (
    await ctx.db.pool.query<{ id: number }>(
      "SELECT id FROM users WHERE company_id = $1 AND role = 'REGISTERED_EMPLOYEE' AND is_active ORDER BY id LIMIT 1",
      [companyId],
    )
  ).rows[0]!.id;
const unitLocations = new Map(
  (await ctx.db.pool.query<{ id: number; location_id: number }>('SELECT id, location_id FROM cooling_units')).rows.map((row) => [
    row.id,
    row.location_id,
  ]),
);

t.test(`${ITERATIONS} random tokens and filters`, async (t) => {
  for (let iteration = 0; iteration < ITERATIONS; iteration++) {
    const company = random.pick(demo.companies);
    const tokenScopes = scopes.filter(() => random.chance(0.5));
    if (tokenScopes.length === 0) tokenScopes.push(random.pick(scopes));
    const restricted = random.chance(0.5) ? company.cooling_unit_ids.filter(() => random.chance(0.5)) : [];
    const { headers } = await issueToken(ctx, await employeeOf(company.id), { scopes: tokenScopes, cooling_unit_ids: restricted });
    const readable = restricted.length > 0 ? restricted : company.cooling_unit_ids;

    const [endpoint, scope] = random.pick(endpoints);
    const params = new URLSearchParams({
      period: random.pick(['day', 'week', 'month']),
      page_size: String(random.int(1, 50)),
      page: String(random.int(1, 3)),
    });
    const unitFilter = random.chance(0.4) ? random.pick(allUnits) : undefined;
    const locationFilter = random.chance(0.3) ? random.pick(allLocations) : undefined;
    if (unitFilter !== undefined) params.set('cooling_unit_id', String(unitFilter));
    if (locationFilter !== undefined) params.set('location_id', String(locationFilter));
    const label = `#${iteration} company ${company.id} scopes ${tokenScopes} units [${restricted}] ${endpoint}?${params}`;

    const response = await ctx.app.inject({ method: 'GET', url: `/api/v1/analytics/${endpoint}?${params}`, headers });
    t.ok(response.statusCode < 500, `${label}: no 5xx (${response.statusCode})`);

    let expected = readable;
    if (unitFilter !== undefined) expected = expected.filter((unit) => unit === unitFilter);
    if (locationFilter !== undefined) expected = expected.filter((unit) => unitLocations.get(unit) === locationFilter);
    const expectedStatus = !tokenScopes.includes(scope)
      ? 403
      : (unitFilter !== undefined || locationFilter !== undefined) && expected.length === 0
        ? 404
        : 200;
    t.equal(response.statusCode, expectedStatus, `${label}: status`);
    if (response.statusCode !== 200) continue;

    const body = response.json() as {
      data: Array<{ cooling_unit_id?: number; by_cooling_unit?: Array<{ cooling_unit_id: number }> }>;
      meta: { company_id: number };
    };
    t.equal(body.meta.company_id, company.id, `${label}: the token's company`);
    const seen = body.data.flatMap((record) =>
      record.by_cooling_unit ? record.by_cooling_unit.map((unit) => unit.cooling_unit_id) : [record.cooling_unit_id!],
    );
    const outside = seen.filter((unit) => !expected.includes(unit));
    t.same(outside, [], `${label}: every record is a readable unit`);
  }
});
