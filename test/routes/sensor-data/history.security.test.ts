// GET /api/v1/sensor-data, security, in both storage profiles (test/helpers/sensor-world.ts): a
// token reads only its company's units, and of those only the ones it names; the sensor_data
// scope and a token are required.
import t from 'tap';
import { issueToken } from '../../helpers/tokens.js';
import { createSensorWorld, eachProfile } from '../../helpers/sensor-world.js';

eachProfile(t, async (t, profile) => {
  const { ctx, a, b, a1, a2, get } = await createSensorWorld(t, profile);

  await t.test('a token restricted to units reads only those', async (t) => {
    const narrow = await issueToken(ctx, a.employeeId, { scopes: ['sensor_data'], cooling_unit_ids: [a2] });
    const mine = await get('start_date=2026-03-10&end_date=2026-03-10&page_size=1000', narrow.headers);
    t.ok(
      mine.body.data.length > 0 && mine.body.data.every((r) => r.cooling_unit_id === a2),
      "without cooling_unit_id: only the token's units",
    );
    t.equal(mine.body.meta.pagination.total_count, 192);
    for (const unit of [a1, b.unitIds[0]!, a.deletedUnitId, 2_000_000]) {
      t.equal((await get(`cooling_unit_id=${unit}`, narrow.headers)).status, 404, `unit ${unit} is 404 for a token restricted to ${a2}`);
    }
  });

  await t.test("a company reads none of another company's readings", async (t) => {
    t.equal((await get(`cooling_unit_id=${b.unitIds[0]}`)).status, 404, "another company's unit is 404 for a company-wide token");
    const other = await issueToken(ctx, b.employeeId, { scopes: ['sensor_data'] });
    const empty = await get('start_date=2026-03-10&end_date=2026-03-10', other.headers);
    t.same([empty.status, empty.body.data, empty.body.meta.pagination.total_count], [200, [], 0], "company B sees none of A's readings");
  });

  await t.test('the sensor_data scope and a token are required', async (t) => {
    const noScope = await issueToken(ctx, a.employeeId, { scopes: ['utilization'] });
    t.equal((await get('', noScope.headers)).status, 403, 'without the sensor_data scope: 403');
    t.equal((await get('', {} as never)).status, 401, 'without a token: 401');
  });
});
