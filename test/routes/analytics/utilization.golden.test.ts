// Utilization figures on a hand-built data set, each equal to a value computed by hand.
// Unit A (capacity 100 crates): 10 crates of 20 kg in on Sun 2026-03-01 00:00; on 03-02 12:00 a
// check-out takes 4 whole crates and half of a fifth (10 kg); on 03-03 06:00 two 25 kg crates in.
import t from 'tap';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';
import { issueToken } from '../../helpers/tokens.js';

const ctx = await createTestApp(t);
ctx.clock.set(new Date('2026-03-15T12:00:00Z'));
const acme = await createCompany(ctx.db.pool, 'Acme');
const rival = await createCompany(ctx.db.pool, 'Rival');
const [unitA, unitB] = acme.unitIds as [number, number];
const [farmer1, farmer2] = acme.farmerIds as [number, number];
const q = (sql: string, params: unknown[] = []) => ctx.db.pool.query(sql, params);
// the deleted units were deleted before every window here (deleted units: deleted-units.golden.test.ts)
await q("UPDATE cooling_units SET deleted_at = '2026-02-01T00:00:00Z' WHERE deleted");

const crop = (
  await q(
    "INSERT INTO crops (name, emission_factor_without_cooling, emission_factor_with_cooling) VALUES ('Tomato', 1.2, 0.4) RETURNING id",
  )
).rows[0].id;
const checkIn = async (unit: number, farmer: number, at: string, weights: number[]) => {
  const id = (
    await q('INSERT INTO check_ins (cooling_unit_id, farmer_id, checked_in_at) VALUES ($1, $2, $3) RETURNING id', [unit, farmer, at])
  ).rows[0].id;
  const crates = await q(
    'INSERT INTO crates (check_in_id, cooling_unit_id, crop_id, initial_weight_kg) SELECT $1, $2, $3, unnest($4::numeric[]) RETURNING id',
    [id, unit, crop, weights],
  );
  return crates.rows.map((row) => row.id as string);
};
const crates = await checkIn(unitA, farmer1, '2026-03-01T00:00:00Z', Array(10).fill(20));
const checkOut = (
  await q(
    `INSERT INTO check_outs (cooling_unit_id, farmer_id, checked_out_at, currency, cooling_fees, paid)
   VALUES ($1, $2, '2026-03-02T12:00:00Z', 'NGN', 100, true) RETURNING id`,
    [unitA, farmer1],
  )
).rows[0].id;
for (const crate of crates.slice(0, 4)) {
  await q('INSERT INTO crate_check_outs (check_out_id, crate_id, percentage, weight_kg, days_stored) VALUES ($1, $2, 100, 20, 2)', [
    checkOut,
    crate,
  ]);
  await q("UPDATE crates SET fully_checked_out_at = '2026-03-02T12:00:00Z' WHERE id = $1", [crate]);
}
await q('INSERT INTO crate_check_outs (check_out_id, crate_id, percentage, weight_kg, days_stored) VALUES ($1, $2, 50, 10, 2)', [
  checkOut,
  crates[4],
]);
await checkIn(unitA, farmer2, '2026-03-03T06:00:00Z', [25, 25]);
// the rival's busy unit must never show up
await checkIn(rival.unitIds[0]!, rival.farmerIds[0]!, '2026-03-01T00:00:00Z', Array(50).fill(30));

const { headers } = await issueToken(ctx, acme.employeeId, { scopes: ['utilization'] });
const fetchRecords = async (query: string) => {
  const response = await ctx.app.inject({ method: 'GET', url: `/api/v1/analytics/utilization?${query}`, headers });
  t.equal(response.statusCode, 200, query);
  return response.json() as { data: Array<Record<string, number | string>>; meta: { pagination: { total_count: number } } };
};
const zero = {
  check_ins: 0,
  check_outs: 0,
  crates_checked_in: 0,
  kg_checked_in: 0,
  crates_checked_out: 0,
  kg_checked_out: 0,
  active_users: 0,
};

t.test('period=day', async (t) => {
  const body = await fetchRecords(`start_date=2026-03-01&end_date=2026-03-03&cooling_unit_id=${unitA}`);
  t.equal(body.meta.pagination.total_count, 3);
  t.match(body.data, [
    {
      period_start: '2026-03-01',
      period_end: '2026-03-01',
      utilization_rate: 0.1,
      average_crates_in_storage: 10,
      crates_in_storage: 10,
      kg_in_storage: 200,
      check_ins: 1,
      crates_checked_in: 10,
      kg_checked_in: 200,
      check_outs: 0,
      active_users: 1,
    },
    {
      period_start: '2026-03-02',
      utilization_rate: 0.08,
      average_crates_in_storage: 8,
      crates_in_storage: 6,
      kg_in_storage: 110,
      check_ins: 0,
      check_outs: 1,
      crates_checked_out: 4.5,
      kg_checked_out: 90,
      active_users: 1,
    },
    {
      period_start: '2026-03-03',
      utilization_rate: 0.075,
      average_crates_in_storage: 7.5,
      crates_in_storage: 8,
      kg_in_storage: 160,
      check_ins: 1,
      crates_checked_in: 2,
      kg_checked_in: 50,
      check_outs: 0,
      active_users: 1,
    },
  ]);
});

t.test('period=week starts on Monday and clips to the window', async (t) => {
  const body = await fetchRecords(`start_date=2026-03-01&end_date=2026-03-03&period=week&cooling_unit_id=${unitA}`);
  t.match(body.data, [
    { period_start: '2026-03-01', period_end: '2026-03-01', utilization_rate: 0.1 },
    {
      period_start: '2026-03-02',
      period_end: '2026-03-03',
      utilization_rate: 0.0775,
      average_crates_in_storage: 7.75,
      check_ins: 1,
      check_outs: 1,
      active_users: 2,
    },
  ]);
});

t.test('period=month, every unit of the company, none of the rival', async (t) => {
  const body = await fetchRecords('start_date=2026-03-01&end_date=2026-03-03&period=month');
  t.equal(body.meta.pagination.total_count, 3, 'one bucket x three live units');
  t.same(
    body.data.map((record) => record.cooling_unit_id),
    acme.unitIds,
  );
  t.match(body.data[0], {
    period_start: '2026-03-01',
    period_end: '2026-03-03',
    utilization_rate: 0.085,
    check_ins: 2,
    check_outs: 1,
    crates_checked_in: 12,
    kg_checked_in: 250,
    active_users: 2,
  });
  t.match(
    body.data[1],
    { cooling_unit_id: unitB, utilization_rate: 0, crates_in_storage: 0, ...zero },
    'a unit without movements is 0, not missing',
  );
});

t.test('the current period is averaged up to now; one that has not begun has no occupancy (null)', async (t) => {
  // now is 2026-03-15 12:00: 03-15 is half elapsed, 03-16 has not begun (periods-not-begun.golden.test.ts)
  const body = await fetchRecords(`start_date=2026-03-15&end_date=2026-03-16&cooling_unit_id=${unitA}`);
  t.match(body.data, [
    { period_start: '2026-03-15', average_crates_in_storage: 8, utilization_rate: 0.08, crates_in_storage: 8, kg_in_storage: 160 },
    {
      period_start: '2026-03-16',
      average_crates_in_storage: null,
      utilization_rate: null,
      crates_in_storage: null,
      kg_in_storage: null,
      ...zero,
    },
  ]);
});

t.test('overfilled units report a rate above 1', async (t) => {
  await checkIn(unitB, farmer1, '2026-03-10T00:00:00Z', Array(150).fill(20));
  const body = await fetchRecords(`start_date=2026-03-11&end_date=2026-03-11&cooling_unit_id=${unitB}`);
  t.equal(body.data[0]!.utilization_rate, 1.5);
});

// Each crate carries its check-in's time for the index that finds the stays overlapping a page
// (sql/migrations/020_crate-stays.sql): it must never disagree with the check-in, whoever writes.
const unitC = acme.unitIds[2]!;
const storedArrivals = async (checkInId: string) =>
  (await q('SELECT DISTINCT checked_in_at FROM crates WHERE check_in_id = $1', [checkInId])).rows.map((row) =>
    (row.checked_in_at as Date).toISOString(),
  );
const checkInOf = async (crateId: string) =>
  (await q('SELECT check_in_id FROM crates WHERE id = $1', [crateId])).rows[0].check_in_id as string;

t.test("a check-in's time corrected afterwards moves its crates' occupancy with it", async (t) => {
  const [crate] = await checkIn(unitC, farmer1, '2026-03-05T00:00:00Z', [10, 10, 10, 10]);
  const checkInId = await checkInOf(crate!);
  const averages = async () =>
    (await fetchRecords(`start_date=2026-03-04&end_date=2026-03-05&cooling_unit_id=${unitC}`)).data.map(
      (record) => record.average_crates_in_storage,
    );
  t.same(await averages(), [0, 4]);
  await q("UPDATE check_ins SET checked_in_at = '2026-03-05T12:00:00Z' WHERE id = $1", [checkInId]);
  t.same(await storedArrivals(checkInId), ['2026-03-05T12:00:00.000Z'], 'every crate of the check-in follows it');
  t.same(await averages(), [0, 2], 'half a day in storage');
  await q("UPDATE check_ins SET checked_in_at = '2026-03-04T00:00:00Z' WHERE id = $1", [checkInId]);
  t.same(await averages(), [4, 4], 'moved earlier: in storage the day before too');
});

t.test("a crate written with another time, or moved to another check-in, takes its check-in's", async (t) => {
  const [crate] = await checkIn(unitC, farmer2, '2026-03-08T00:00:00Z', [10]);
  const first = await checkInOf(crate!);
  await q("UPDATE crates SET checked_in_at = '2020-01-01T00:00:00Z' WHERE id = $1", [crate]);
  t.same(await storedArrivals(first), ['2026-03-08T00:00:00.000Z'], 'a direct write is overruled');
  const [other] = await checkIn(unitC, farmer2, '2026-03-09T00:00:00Z', [10]);
  const second = await checkInOf(other!);
  await q('UPDATE crates SET check_in_id = $1 WHERE id = $2', [second, crate]);
  t.same(await storedArrivals(second), ['2026-03-09T00:00:00.000Z'], 'moved: the new check-in time');
  const inserted = await q(
    "INSERT INTO crates (check_in_id, cooling_unit_id, crop_id, initial_weight_kg, checked_in_at) VALUES ($1, $2, $3, 5, '2020-01-01') RETURNING checked_in_at",
    [first, unitC, crop],
  );
  t.equal((inserted.rows[0].checked_in_at as Date).toISOString(), '2026-03-08T00:00:00.000Z', 'an insert is overruled too');
  await t.rejects(
    q('INSERT INTO crates (check_in_id, cooling_unit_id, crop_id, initial_weight_kg) VALUES (-1, $1, $2, 5)', [unitC, crop]),
    { code: '23503', message: 'check-in -1 does not exist (crates.check_in_id)' },
    'a check-in that does not exist is refused as the foreign key would',
  );
});

t.test('a full check-out recorded before its check-in (bad data) is accepted and counts no time in storage', async (t) => {
  const [crate] = await checkIn(unitB, farmer1, '2026-03-07T12:00:00Z', [20]);
  await q("UPDATE crates SET fully_checked_out_at = '2026-03-07T06:00:00Z' WHERE id = $1", [crate]);
  const body = await fetchRecords(`start_date=2026-03-07&end_date=2026-03-07&cooling_unit_id=${unitB}`);
  t.match(body.data, [{ check_ins: 1, crates_checked_in: 1, average_crates_in_storage: 0, crates_in_storage: 0, kg_in_storage: 0 }]);
});
