// Shared by every per-unit analytics endpoint: it answers only to a token with its scope, and
// only about the units the token may read. Each endpoint's security test runs this suite.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Test } from 'tap';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';
import { ALL_SCOPES, issueToken } from '../../helpers/tokens.js';

export interface UnitScopeSuite {
  endpoint: string;
  scope: string;
  /** A per-record figure that is exactly 1 when the unit had the one seeded check-out. */
  oneCheckOutField: string;
}

export async function unitScopeSecuritySuite(t: Test, { endpoint: ENDPOINT, scope: SCOPE, oneCheckOutField }: UnitScopeSuite) {
  const ctx = await createTestApp(t);
  ctx.clock.set(new Date('2025-03-10T12:00:00Z'));
  const a = await createCompany(ctx.db.pool, 'Security A');
  const b = await createCompany(ctx.db.pool, 'Security B');
  const [u1, u2] = a.unitIds as [number, number];
  // the fixtures' deleted units were deleted before the window: they report on none of its days
  await ctx.db.pool.query("UPDATE cooling_units SET deleted_at = '2025-03-01T00:00:00Z' WHERE deleted");
  // a check-out on every unit of both companies: a leak would show up in the records
  await ctx.db.pool.query(
    `INSERT INTO check_outs (cooling_unit_id, farmer_id, checked_out_at, currency, cooling_fees, paid, payment_method)
     SELECT id, $1, '2025-03-09T10:00:00Z', 'NGN', 10, true, 'CASH' FROM cooling_units`,
    [a.farmerIds[0]],
  );

  const full = await issueToken(ctx, a.employeeId, { scopes: [SCOPE] });
  const get = (query: string, headers: Record<string, string> = full.headers) =>
    ctx.app.inject({ method: 'GET', url: `${ENDPOINT}?${query}`, headers });

  t.test('no token or a bad token: 401', async (t) => {
    t.equal((await get('', {})).statusCode, 401);
    const bad = await get('', { authorization: 'Bearer ctk_not-a-token' });
    t.equal(bad.statusCode, 401);
    t.equal((bad.json() as { error: { code: string } }).error.code, 'unauthorized');
  });

  t.test(`a token without the ${SCOPE} scope: 403 insufficient_scope`, async (t) => {
    const other = await issueToken(ctx, a.employeeId, { scopes: ALL_SCOPES.filter((scope) => scope !== SCOPE) });
    const response = await get('', other.headers);
    t.equal(response.statusCode, 403);
    t.strictSame(response.json(), {
      error: { code: 'insufficient_scope', message: `This token lacks the "${SCOPE}" scope`, details: { required_scope: SCOPE } },
    });
  });

  t.test("another company's unit or location, a deleted or unknown unit: 404", async (t) => {
    for (const query of [
      `cooling_unit_id=${b.unitIds[0]}`,
      `cooling_unit_id=${a.deletedUnitId}`,
      'cooling_unit_id=2147483647',
      `location_id=${b.locationId}`,
    ]) {
      const response = await get(query);
      t.equal(response.statusCode, 404, query);
      t.equal((response.json() as { error: { code: string } }).error.code, 'not_found', query);
    }
  });

  t.test('a company-wide token reads only its own live units', async (t) => {
    const body = (await get('start_date=2025-03-09&end_date=2025-03-09')).json() as {
      data: Array<{ cooling_unit_id: number } & Record<string, number>>;
    };
    t.strictSame(
      body.data.map((r) => r.cooling_unit_id),
      a.unitIds,
    );
    t.ok(
      body.data.every((r) => r[oneCheckOutField] === 1),
      `${oneCheckOutField} is 1 on every unit`,
    );
  });

  t.test("a deleted unit's history stays with the tokens that read it, up to its deletion", async (t) => {
    // unit D of A: granted to a restricted token while live, a check-out on 03-05, deleted 03-07 00:00
    const unitD = (
      await ctx.db.pool.query<{ id: number }>(
        `INSERT INTO cooling_units (location_id, company_id, name, capacity_crates, capacity_kg)
       VALUES ($1, $2, 'Security A unit D', 100, 2500) RETURNING id`,
        [a.locationId, a.companyId],
      )
    ).rows[0]!.id;
    /** The status of a request naming D, once it is `status` or after about 2 s of asking. */
    const namingD = async (status: number) => {
      let answer = (await get(`cooling_unit_id=${unitD}`)).statusCode;
      for (let i = 0; i < 200 && answer !== status; i++) {
        await sleep(10);
        answer = (await get(`cooling_unit_id=${unitD}`)).statusCode;
      }
      return answer;
    };
    // the live directory hears of the new unit asynchronously too: until it has, D is unknown (404)
    // and the wait for the deletion's 404 below would end before the deletion was heard of
    t.equal(await namingD(200), 200, 'the new unit can be named');
    const withD = await issueToken(ctx, a.employeeId, { scopes: [SCOPE], cooling_unit_ids: [u2, unitD] });
    const withoutD = await issueToken(ctx, a.employeeId, { scopes: [SCOPE], cooling_unit_ids: [u2] });
    await ctx.db.pool.query(
      `INSERT INTO check_outs (cooling_unit_id, farmer_id, checked_out_at, currency, cooling_fees, paid, payment_method)
       VALUES ($1, $2, '2025-03-05T10:00:00Z', 'NGN', 10, true, 'CASH')`,
      [unitD, a.farmerIds[0]],
    );
    await ctx.db.pool.query("UPDATE cooling_units SET deleted = true, deleted_at = '2025-03-07T00:00:00Z' WHERE id = $1", [unitD]);
    // the live directory hears of the deletion asynchronously (LISTEN/NOTIFY): wait until it has
    t.equal(await namingD(404), 404, 'a deleted unit cannot be named');

    type Body = {
      data: Array<{ cooling_unit_id: number; period_start: string } & Record<string, number>>;
      meta: { pagination: { total_count: number } };
    };
    const window = 'start_date=2025-03-01&end_date=2025-03-09&page_size=1000';
    const days = (body: Body) => body.data.filter((r) => r.cooling_unit_id === unitD).map((r) => r.period_start);
    const reported = ['2025-03-01', '2025-03-02', '2025-03-03', '2025-03-04', '2025-03-05', '2025-03-06'];

    const companyWide = (await get(window)).json() as Body;
    t.equal(
      companyWide.meta.pagination.total_count,
      9 * a.unitIds.length + 6,
      'every live unit each day, D on the 6 days before its deletion',
    );
    t.strictSame(days(companyWide), reported);
    t.equal(
      companyWide.data.find((r) => r.cooling_unit_id === unitD && r.period_start === '2025-03-05')![oneCheckOutField],
      1,
      'its check-out still counts',
    );

    const byLocation = (await get(`${window}&location_id=${a.locationId}`)).json() as Body;
    t.strictSame(byLocation.data, companyWide.data, 'a location reports on its deleted units too');

    const granted = (await get(window, withD.headers)).json() as Body;
    t.equal(granted.meta.pagination.total_count, 9 + 6, 'a token granted D keeps its history');
    t.strictSame(days(granted), reported);
    const notGranted = (await get(window, withoutD.headers)).json() as Body;
    t.equal(notGranted.meta.pagination.total_count, 9);
    t.strictSame(days(notGranted), [], 'a token never granted D never sees it');
    const filtered = (await get(`${window}&cooling_unit_id=${u2}`)).json() as Body;
    t.strictSame(days(filtered), [], 'cooling_unit_id names one live unit');
  });

  t.test('a restricted token sees only its units', async (t) => {
    const restricted = await issueToken(ctx, a.employeeId, { scopes: [SCOPE], cooling_unit_ids: [u2] });
    const response = await get('start_date=2025-03-01&end_date=2025-03-09', restricted.headers);
    const body = response.json() as { data: { cooling_unit_id: number }[]; meta: { pagination: { total_count: number } } };
    t.equal(body.meta.pagination.total_count, 9);
    t.ok(body.data.every((r) => r.cooling_unit_id === u2));
    t.equal((await get(`cooling_unit_id=${u1}`, restricted.headers)).statusCode, 404, 'a unit of its company outside the grant');
    t.equal((await get(`cooling_unit_id=${u2}`, restricted.headers)).statusCode, 200);
    t.equal((await get(`location_id=${a.locationId}`, restricted.headers)).statusCode, 200);
  });
}
