// GET /api/v1/analytics/users, who may read what: scope, tenant isolation, unit restriction,
// token state. Figures come from the hand-built world in users.world.ts.
import t from 'tap';
import { issueToken } from '../../helpers/tokens.js';
import { GOLDEN_WINDOW, createUsersWorld, expectedRecords, type ErrorJson, type UsersJson } from './users.world.js';

const world = await createUsersWorld(t);
const { a, b } = world;
const [a1, , a3] = a.unitIds as [number, number, number];
const employeeJwt = await world.jwtFor(a.employeeId, { ttlSeconds: 30 * 24 * 3600 });

t.test('a token without the users scope: 403 insufficient_scope', async (t) => {
  const token = await issueToken(world, a.employeeId, { scopes: ['utilization', 'revenue', 'impact', 'sensor_data'] });
  const response = await world.get(token.headers, GOLDEN_WINDOW);
  t.equal(response.statusCode, 403);
  const body = response.json<ErrorJson>();
  t.equal(body.error.code, 'insufficient_scope');
  t.equal(body.error.details?.required_scope, 'users');
  t.notOk('data' in body);
});

t.test('cooling_unit_id of another company, deleted or unknown: 404, no existence leak', async (t) => {
  const token = await issueToken(world, a.employeeId, { scopes: ['users'] });
  const answers = [];
  for (const unitId of [b.unitIds[0]!, a.deletedUnitId, 999_999]) {
    const response = await world.get(token.headers, `${GOLDEN_WINDOW}&cooling_unit_id=${unitId}`);
    t.equal(response.statusCode, 404, `unit ${unitId}`);
    t.equal(response.json<ErrorJson>().error.code, 'not_found');
    answers.push(response.json<ErrorJson>().error.message.replace(String(unitId), 'N'));
  }
  t.equal(new Set(answers).size, 1, 'the same answer for a foreign, a deleted and a missing unit');
  const location = await world.get(token.headers, `${GOLDEN_WINDOW}&location_id=${b.locationId}`);
  t.equal(location.statusCode, 404, "another company's location");
});

t.test('a token restricted to one unit sees only that unit and its farmers', async (t) => {
  const token = await issueToken(world, a.employeeId, { scopes: ['users'], cooling_unit_ids: [a3] });
  const response = await world.get(token.headers, `${GOLDEN_WINDOW}&period=month`);
  t.equal(response.statusCode, 200);
  const body = response.json<UsersJson>();
  // a3's farmers: registered by opA2 (f2 f6, also on a2) or checked in there (f2 f6); f1 f3 f4 f5 f7 are not
  t.same(
    body.data,
    expectedRecords(
      [
        ['2026-02-25', '2026-02-28', 2, 1, 1, { [a3]: [1, 1, 0] }],
        ['2026-03-01', '2026-03-10', 2, 1, 0, { [a3]: [1, 0, 1] }],
      ],
      [a3],
    ),
  );
  // the units it was not granted are 404 even though they are the company's own
  const other = await world.get(token.headers, `${GOLDEN_WINDOW}&cooling_unit_id=${a1}`);
  t.equal(other.statusCode, 404);
  const own = await world.get(token.headers, `${GOLDEN_WINDOW}&period=month&cooling_unit_id=${a3}`);
  t.same(own.json<UsersJson>().data, body.data);
});

t.test("company B's token never counts company A's units", async (t) => {
  const token = await issueToken(world, b.employeeId, { scopes: ['users'] });
  const body = (await world.get(token.headers, `${GOLDEN_WINDOW}&period=month`)).json<UsersJson>();
  t.equal(body.meta.company_id, b.companyId);
  for (const record of body.data) {
    t.same(
      record.by_cooling_unit.map((unit) => unit.cooling_unit_id),
      b.unitIds,
    );
  }
  const a3Farmers = await world.get(token.headers, `${GOLDEN_WINDOW}&cooling_unit_id=${a3}`);
  t.equal(a3Farmers.statusCode, 404);
});

t.test('missing, malformed, revoked and expired tokens: 401', async (t) => {
  const missing = await world.get({}, GOLDEN_WINDOW);
  t.equal(missing.statusCode, 401);
  t.match(missing.headers['www-authenticate'], /^Bearer/);
  const malformed = await world.get({ authorization: 'Bearer ctk_nope' }, GOLDEN_WINDOW);
  t.equal(malformed.statusCode, 401);

  const token = await issueToken(world, a.employeeId, { scopes: ['users'] });
  t.equal((await world.get(token.headers, GOLDEN_WINDOW)).statusCode, 200, 'works before revocation');
  const revoke = await world.app.inject({
    method: 'POST',
    url: `/api/v1/api-tokens/${token.id}/revoke`,
    headers: { authorization: `Bearer ${employeeJwt}` },
  });
  t.equal(revoke.statusCode, 200);
  const revoked = await world.get(token.headers, GOLDEN_WINDOW);
  t.equal(revoked.statusCode, 401);
  t.equal(revoked.json<ErrorJson>().error.code, 'unauthorized');
  t.notOk('data' in revoked.json());

  const expiring = await issueToken(world, a.employeeId, { scopes: ['users'], expires_at: '2026-03-15T13:00:00Z' });
  t.equal((await world.get(expiring.headers, GOLDEN_WINDOW)).statusCode, 200);
  world.clock.set(new Date('2026-03-15T13:00:00Z'));
  t.equal((await world.get(expiring.headers, GOLDEN_WINDOW)).statusCode, 401, 'expired at expires_at to the second');
});
