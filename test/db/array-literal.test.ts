// The array literals the warm-token page sends instead of JavaScript arrays (src/db/array-literal.ts):
// PostgreSQL reads them back as the same arrays, through the casts the queries use, and anything
// that is not a plain integer or YYYY-MM-DD day is refused before it could reach a literal.
import pg from 'pg';
import t from 'tap';
import { dayArrayLiteral, intArrayLiteral } from '../../src/db/array-literal.js';
import { adminUrl } from '../helpers/db.js';

t.test('PostgreSQL reads the literals back as the arrays they were built from', async (t) => {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  t.teardown(() => client.end());
  const ids = [3, 17, 2_147_483_647, -4];
  const days = ['2025-06-01', '2024-02-29', '1999-12-31'];
  const { rows } = await client.query<{ ids: number[]; days: string[]; empty_ids: number[]; empty_days: string[] }>(
    'SELECT $1::int[] AS ids, $2::date[]::text[] AS days, $3::int[] AS empty_ids, $4::date[]::text[] AS empty_days',
    [intArrayLiteral(ids), dayArrayLiteral(days), intArrayLiteral([]), dayArrayLiteral([])],
  );
  t.same(rows[0]!.ids, ids);
  t.same(rows[0]!.days, days);
  t.same(rows[0]!.empty_ids, []);
  t.same(rows[0]!.empty_days, []);
});

t.test('anything but an integer or a YYYY-MM-DD day is refused', async (t) => {
  for (const bad of [1.5, NaN, Infinity, 2 ** 53]) {
    t.throws(() => intArrayLiteral([1, bad]), TypeError, `int[] refuses ${bad}`);
  }
  for (const bad of ['2025-06-01}', '2025-6-1', '2025-06-01,2025-06-02', '"2025-06-01"', '', 'NULL']) {
    t.throws(() => dayArrayLiteral(['2025-06-01', bad]), TypeError, `date[] refuses ${JSON.stringify(bad)}`);
  }
});
