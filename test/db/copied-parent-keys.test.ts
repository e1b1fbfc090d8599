// A crate carries its check-in's time and a market survey its check-out's unit, for the analytics'
// indexes (sql/migrations/020_crate-stays.sql, 021_market-survey-units.sql). Triggers keep each copy
// equal to its parent, and they must hold when two transactions write at once: a parent corrected
// while another transaction adds a child to it, in either order, must leave the child with the
// corrected value, on two connections as two processes of the platform would write.
import t from 'tap';
import { createTestDatabase } from '../helpers/db.js';
import { createCompany } from '../helpers/fixtures.js';

const db = await createTestDatabase(t);
const company = await createCompany(db.pool, 'Copies Co');
const [unit, otherUnit] = company.unitIds as [number, number];
const farmer = company.farmerIds[0]!;
const crop = (
  await db.pool.query(
    "INSERT INTO crops (name, emission_factor_without_cooling, emission_factor_with_cooling) VALUES ('Yam', 1, 0.5) RETURNING id",
  )
).rows[0].id as number;
const one = async (sql: string, params: unknown[]) => (await db.pool.query(sql, params)).rows[0].id as string;

const newCheckIn = () =>
  one("INSERT INTO check_ins (cooling_unit_id, farmer_id, checked_in_at) VALUES ($1, $2, '2026-01-01T08:00:00Z') RETURNING id", [
    unit,
    farmer,
  ]);
const newCheckOut = () =>
  one(
    `INSERT INTO check_outs (cooling_unit_id, farmer_id, checked_out_at, currency, cooling_fees, paid)
     VALUES ($1, $2, '2026-01-02T08:00:00Z', 'NGN', 100, true) RETURNING id`,
    [unit, farmer],
  );
const addCrate = (client: { query: typeof db.pool.query }, checkIn: string) =>
  client.query('INSERT INTO crates (check_in_id, cooling_unit_id, crop_id, initial_weight_kg) VALUES ($1, $2, $3, 20)', [
    checkIn,
    unit,
    crop,
  ]);
const addSurvey = (client: { query: typeof db.pool.query }, checkOut: string) =>
  client.query(
    `INSERT INTO market_surveys (check_out_id, crop_id, currency, selling_price_per_unit, kg_per_unit, kg_sold, surveyed_at)
     VALUES ($1, $2, 'NGN', 10, 10, 10, '2026-01-03T08:00:00Z')`,
    [checkOut, crop],
  );
const crateTimes = async (checkIn: string) =>
  (await db.pool.query('SELECT checked_in_at FROM crates WHERE check_in_id = $1', [checkIn])).rows.map((r) =>
    (r.checked_in_at as Date).toISOString(),
  );
const surveyUnits = async (checkOut: string) =>
  (await db.pool.query('SELECT cooling_unit_id FROM market_surveys WHERE check_out_id = $1', [checkOut])).rows.map(
    (r) => r.cooling_unit_id as number,
  );

/** Whether a query is still waiting after a while: a lock makes it wait for the other transaction. */
const stillWaiting = async (pending: Promise<unknown>) =>
  Promise.race([pending.then(() => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 300))]);

/** `first` writes in an open transaction; `second` runs on another connection meanwhile; then `first` commits. */
async function interleave(
  first: (client: { query: typeof db.pool.query }) => Promise<unknown>,
  second: (client: { query: typeof db.pool.query }) => Promise<unknown>,
) {
  const a = await db.pool.connect();
  const b = await db.pool.connect();
  try {
    await a.query('BEGIN');
    await first(a);
    await b.query('BEGIN');
    const pending = second(b);
    const waited = await stillWaiting(pending);
    await a.query('COMMIT');
    await pending;
    await b.query('COMMIT');
    return waited;
  } finally {
    a.release();
    b.release();
  }
}

const moved = '2026-01-01T20:00:00.000Z';

t.test('a check-in corrected while a crate is added to it: the crate takes the corrected time', async (t) => {
  const checkIn = await newCheckIn();
  const waited = await interleave(
    (a) => a.query('UPDATE check_ins SET checked_in_at = $1 WHERE id = $2', [moved, checkIn]),
    (b) => addCrate(b, checkIn),
  );
  t.ok(waited, 'the crate waits for the correction to commit');
  t.same(await crateTimes(checkIn), [moved]);
});

t.test('a crate added while its check-in is corrected: the correction moves it too', async (t) => {
  const checkIn = await newCheckIn();
  const waited = await interleave(
    (a) => addCrate(a, checkIn),
    (b) => b.query('UPDATE check_ins SET checked_in_at = $1 WHERE id = $2', [moved, checkIn]),
  );
  t.ok(waited, 'the correction waits for the crate to commit');
  t.same(await crateTimes(checkIn), [moved]);
});

t.test('a check-out moved to another unit while its survey is written: the survey takes the new unit', async (t) => {
  const checkOut = await newCheckOut();
  const waited = await interleave(
    (a) => a.query('UPDATE check_outs SET cooling_unit_id = $1 WHERE id = $2', [otherUnit, checkOut]),
    (b) => addSurvey(b, checkOut),
  );
  t.ok(waited, 'the survey waits for the move to commit');
  t.same(await surveyUnits(checkOut), [otherUnit]);
});

t.test('a survey written while its check-out is moved: the move takes the survey along', async (t) => {
  const checkOut = await newCheckOut();
  const waited = await interleave(
    (a) => addSurvey(a, checkOut),
    (b) => b.query('UPDATE check_outs SET cooling_unit_id = $1 WHERE id = $2', [otherUnit, checkOut]),
  );
  t.ok(waited, 'the move waits for the survey to commit');
  t.same(await surveyUnits(checkOut), [otherUnit]);
});
