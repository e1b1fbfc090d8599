// The rollups give the same records on the Piscina pool as inline, and their decimal arithmetic
// is exact: parsing PostgreSQL's numeric text and rounding half away from zero.
import t from 'tap';
import {
  createRollups,
  INLINE_BELOW_UNIT_DAYS,
  type RollupBody,
  type RollupRequest,
  rollupWorkerFile,
  type RowsQuery,
  threadDatabaseSettings,
} from '../../src/analytics/rollups.js';
import { createTestDatabase } from '../helpers/db.js';
import { perUnit } from '../workers/row-parts.js';
import {
  type Cell,
  type CheckOutRow,
  type CrateRow,
  type FarmerRow,
  type ImpactInput,
  type RevenueInput,
  type SurveyRow,
  centsOf,
  centsToNumber,
  decimal,
  rowsOf,
  rollupImpact,
  rollupRevenue,
  runRollup,
  scaled,
} from '../../workers/rollups/index.js';

// a small deterministic generator (mulberry32), so a failure reproduces
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296;
  };
}
const next = random(20_250_301);
const int = (max: number) => Math.floor(next() * max);
const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
const amount = (maxCents: number, decimals = 2) => {
  const units = int(maxCents);
  return decimals === 0 ? String(units) : `${Math.floor(units / 10 ** decimals)}.${String(units % 10 ** decimals).padStart(decimals, '0')}`;
};

const days = ['2025-03-01', '2025-03-02', '2025-03-03'];
const units = [11, 12, 13, 14];
const cells: Cell[] = days.flatMap((day) => units.map((unit) => ({ cooling_unit_id: unit, period_start: day, period_end: day })));
// rows for a unit that is not on the page must be ignored
const rowUnits = [...units, 99];
const farmers = [1, 2, 3, 4, 5, 6];

const revenueInput: RevenueInput = {
  cells,
  checkOuts: perUnit(
    Array.from({ length: 3000 }, (): CheckOutRow => {
      const fees = amount(100_000_000);
      const paid = next() < 0.6;
      const discount = amount(Number(fees.replace('.', '')) + 1);
      return [
        pick(days),
        pick(rowUnits),
        pick(['NGN', 'USD', 'EUR']),
        fees,
        discount,
        paid,
        paid ? pick(['CASH', 'UPI', 'OPAY', null]) : null,
      ];
    }),
  ),
};

const impactInput: ImpactInput = {
  cells,
  currency: 'NGN',
  country: 'PH',
  farmers: perUnit(
    days.flatMap((day) =>
      rowUnits.flatMap((unit) =>
        farmers
          .filter(() => next() < 0.7)
          .map((farmer): FarmerRow => {
            const served = next() < 0.9; // else only there for a market survey's baseline
            if (farmer === 6) return [day, unit, farmer, served, null, null, null]; // no baseline survey
            return [day, unit, farmer, served, amount(10_001, 4), pick(['NGN', 'NGN', 'USD']), amount(50_000)];
          }),
      ),
    ),
  ),
  crates: perUnit(
    Array.from({ length: 4000 }, (): CrateRow => [
      pick(days),
      pick(rowUnits),
      pick(farmers),
      amount(5_000),
      amount(20_000, 4),
      amount(10_000, 4),
    ]),
  ),
  surveys: perUnit(
    Array.from({ length: 1500 }, (): SurveyRow => [
      pick(days),
      pick(rowUnits),
      pick(farmers),
      pick(['NGN', 'NGN', 'USD']),
      amount(100_000),
      pick(['3.00', '7.00', '25.00', '0.33', '12.50', '1.00']),
      amount(10_000),
      amount(1_000),
    ]),
  ),
};

// A page's rows as the routes' queries answer them (one row, a `rows` JSON text), through the
// real database, so a thread's own pool and the inline path both run a query.
const rowsQuery = (json: string): RowsQuery => ({ text: 'SELECT $1::text AS rows', values: [json] });
/** a row set in parts, a row each, as the revenue and impact queries answer it */
const partsQuery = (parts: string[]): RowsQuery => ({ text: 'SELECT unnest($1::text[]) AS rows', values: [parts] });
const revenueRequest = (input: RevenueInput): RollupRequest => ({
  kind: 'revenue',
  cells: input.cells,
  checkOuts: partsQuery(input.checkOuts),
});
const impactRequest: RollupRequest = {
  kind: 'impact',
  cells: impactInput.cells,
  currency: impactInput.currency,
  country: impactInput.country,
  crates: partsQuery(impactInput.crates),
  surveys: partsQuery(impactInput.surveys),
  farmers: partsQuery(impactInput.farmers),
};
const usersRequest: RollupRequest = {
  kind: 'users',
  buckets: days.map((day, index) => ({ period_start: day, period_end: day, firstDay: index, lastDay: index, elapsed: index < 2 })),
  units: units.map((unit, index): [number, number] => [unit, index === 0 ? 1 : days.length]), // unit 11 deleted after the first day
  joined: rowsQuery(
    JSON.stringify([
      [-1, 40],
      [0, 2],
      [2, 1],
    ]),
  ),
  checkIns: rowsQuery(
    JSON.stringify([
      Array.from({ length: 500 }, () => int(days.length)),
      Array.from({ length: 500 }, () => pick(rowUnits)),
      Array.from({ length: 500 }, () => pick(farmers)),
    ]),
  ),
  checkOuts: rowsQuery(
    JSON.stringify([
      Array.from({ length: 300 }, () => int(days.length)),
      Array.from({ length: 300 }, () => pick(rowUnits)),
      Array.from({ length: 300 }, () => pick(farmers)),
    ]),
  ),
};
const text = (body: RollupBody) => (typeof body === 'string' ? body : new TextDecoder().decode(body));

t.test('pool and inline rollups give identical records', async (t) => {
  const db = await createTestDatabase(t);
  const pool = createRollups({ mode: 'pool', threads: 2, db: db.pool, inlineBelowUnitDays: 0 });
  const inline = createRollups({ mode: 'inline', threads: 2, db: db.pool });
  t.teardown(() => pool.close());
  const [pooledRevenue, pooledImpact] = await Promise.all([pool.rollUp(revenueRequest(revenueInput), 1), pool.rollUp(impactRequest, 1)]);
  t.type(pooledRevenue, Uint8Array, 'a thread answers bytes');
  t.equal(text(pooledRevenue), await inline.rollUp(revenueRequest(revenueInput), 1), 'the same JSON text, byte for byte');
  t.equal(text(pooledImpact), await inline.rollUp(impactRequest, 1));
  t.strictSame(JSON.parse(text(pooledRevenue)), rollupRevenue(revenueInput), 'the text of the records');
  t.strictSame(JSON.parse(text(pooledImpact)), rollupImpact(impactInput));
  const revenue = rollupRevenue(revenueInput);
  const impact = rollupImpact(impactInput);
  t.equal(revenue.length, cells.length);
  t.ok(revenue.every((record) => record.check_outs > 0));
  t.ok(impact.every((record) => record.income_increase !== 0 && record.food_loss_prevented_kg > 0));
  const pooledUsers = await pool.rollUp(usersRequest, 1);
  t.type(pooledUsers, Uint8Array);
  t.equal(text(pooledUsers), text(await inline.rollUp(usersRequest, 1)), 'users: the same JSON, byte for byte');
  t.match(JSON.parse(text(pooledUsers)), [{ registered_users: 42 }, { registered_users: 42 }, { registered_users: null }]);
  // many tasks at once, on both threads
  const again = await Promise.all(Array.from({ length: 8 }, () => pool.rollUp(revenueRequest(revenueInput), 1)));
  for (const body of again) t.equal(text(body), text(pooledRevenue));
  // closing waits for the tasks already on the pool, and a task that arrives later (a request
  // still in flight at shutdown) runs inline instead of failing
  const queued = Array.from({ length: 6 }, () => pool.rollUp(revenueRequest(revenueInput), 1));
  await pool.close();
  for (const body of await Promise.all(queued)) t.equal(text(body), text(pooledRevenue), 'queued before close: finished');
  t.equal(await pool.rollUp(revenueRequest(revenueInput), 1), text(pooledRevenue), 'after close: answered inline');
});

t.test("a thread's database error reaches the route with its code", async (t) => {
  const db = await createTestDatabase(t);
  const pool = createRollups({ mode: 'pool', threads: 1, db: db.pool, inlineBelowUnitDays: 0 });
  t.teardown(() => pool.close());
  const broken: RollupRequest = { kind: 'revenue', cells, checkOuts: { text: 'SELECT rows FROM no_such_table', values: [] } };
  await t.rejects(pool.rollUp(broken, 1), { code: '42P01', message: /no_such_table/ });
});

t.test('a small page runs inline even in pool mode, with the same result', async (t) => {
  const db = await createTestDatabase(t);
  const pool = createRollups({ mode: 'pool', threads: 1, db: db.pool });
  t.teardown(() => pool.close());
  const small: RevenueInput = { cells: cells.slice(0, 2), checkOuts: [JSON.stringify([...rowsOf(revenueInput.checkOuts)].slice(0, 20))] };
  const body = await pool.rollUp(revenueRequest(small), INLINE_BELOW_UNIT_DAYS - 1);
  t.type(body, 'string', 'inline: text');
  t.equal(body, JSON.stringify(rollupRevenue(small)));
  t.equal(pool.queueSize(), 0);
});

t.test('threads get the main pool settings as plain data', async (t) => {
  const db = await createTestDatabase(t);
  const settings = threadDatabaseSettings(db.pool);
  t.match(settings, { connectionString: db.url });
  t.ok(
    Object.values(settings).every((value) => typeof value !== 'function'),
    'nothing a thread cannot receive',
  );
});

t.test('the records serializer writes what JSON.stringify writes, byte for byte', async (t) => {
  t.equal(runRollup({ kind: 'revenue', input: revenueInput }), JSON.stringify(rollupRevenue(revenueInput)));
  t.equal(runRollup({ kind: 'impact', input: impactInput }), JSON.stringify(rollupImpact(impactInput)));
  // the nulls: a paid check-out without a method, a cell without market surveys
  const nulls = runRollup({
    kind: 'revenue',
    input: { cells: cells.slice(0, 1), checkOuts: [JSON.stringify([[days[0], units[0], 'NGN', '10.00', '0.00', true, null]])] },
  });
  t.match(nulls, /"payment_method":null/);
  t.equal(
    nulls,
    JSON.stringify(
      rollupRevenue({ cells: cells.slice(0, 1), checkOuts: [JSON.stringify([[days[0], units[0], 'NGN', '10.00', '0.00', true, null]])] }),
    ),
  );
  // no rows at all: the queries answer no part
  const empty: ImpactInput = { ...impactInput, crates: [], surveys: [], farmers: [] };
  t.match(runRollup({ kind: 'impact', input: empty }), /"market_loss_share":null/);
  t.equal(runRollup({ kind: 'impact', input: empty }), JSON.stringify(rollupImpact(empty)));
});

t.test('revenue totals equal an independent integer-cent sum', async (t) => {
  const records = rollupRevenue(revenueInput);
  const expected = new Map<string, bigint>();
  for (const [, unitId, currency, fees, discount] of rowsOf(revenueInput.checkOuts)) {
    if (unitId === 99) continue;
    const cents = BigInt(fees.replace('.', '')) - BigInt(discount.replace('.', ''));
    expected.set(currency, (expected.get(currency) ?? 0n) + cents);
  }
  const actual = new Map<string, bigint>();
  for (const record of records) {
    for (const total of record.currency_totals) {
      actual.set(total.currency, (actual.get(total.currency) ?? 0n) + BigInt(Math.round(total.total_revenue * 100)));
    }
  }
  t.strictSame(actual, expected);
});

t.test('numeric text parses exactly', async (t) => {
  t.equal(scaled('12.30', 2), 1230n);
  t.equal(scaled('12.3', 2), 1230n);
  t.equal(scaled('7', 2), 700n);
  t.equal(scaled('0.0001', 4), 1n);
  t.equal(scaled('999999999999.99', 2), 99_999_999_999_999n);
  t.equal(scaled('-0.50', 2), -50n);
  t.throws(() => scaled('0.001', 2), RangeError);
});

t.test('money in Number cents is exact: the same figures as the BigInt definition', async (t) => {
  t.equal(centsOf('12.30'), 1230);
  t.equal(centsOf('12.3'), 1230);
  t.equal(centsOf('7'), 700);
  t.equal(centsOf('999999999999.99'), 99_999_999_999_999);
  t.throws(() => centsOf('0.001'), RangeError);
  t.throws(() => centsOf('1e3'), RangeError);
  // every amount cents / 100 prints as the exactly rounded decimal, even where float noise lurks
  for (const cents of [1, 5, 10, 29, 30, 115, 2675, 100_001, 99_999_999_999_999, 4_503_599_627_370_495]) {
    t.equal(centsToNumber(cents), decimal(BigInt(cents), 100n), `${cents} cents`);
  }
  for (let i = 0; i < 20_000; i++) {
    const cents = int(2 ** 30) * 2 ** int(23) + int(1000);
    if (centsToNumber(cents) !== decimal(BigInt(cents), 100n)) t.fail(`${cents} cents`);
  }
  // a sum beyond 2^53 cents would no longer be exact: refused, never rounded silently
  t.throws(() => centsToNumber(2 ** 53), RangeError);
  t.throws(() => centsToNumber(0.5), RangeError);
});

t.test('decimals round half away from zero and print no float noise', async (t) => {
  t.equal(decimal(30n, 100n), 0.3);
  t.equal(decimal(1n, 200n), 0.01); // 0.005
  t.equal(decimal(-1n, 200n), -0.01);
  t.equal(decimal(1n, 201n), 0); // 0.00497...
  t.equal(decimal(-1n, 201n), 0);
  t.equal(decimal(2675n, 1000n), 2.68); // 2.675 is 2.67499999... as a float
  t.equal(decimal(34n, 11n), 3.09);
  t.equal(decimal(7n, 80n, 4), 0.0875);
  t.equal(decimal(299_999_999_999_997n, 100n), 2999999999999.97);
  t.equal(decimal(5n, 1n, 0), 5);
});

t.test('the task file is found from source and from a build', async (t) => {
  t.equal(rollupWorkerFile('file:///app/src/analytics/rollups.ts').href, 'file:///app/workers/rollup-thread.ts');
  t.equal(rollupWorkerFile('file:///app/dist/src/analytics/rollups.js').href, 'file:///app/dist/workers/rollup-thread.js');
});
