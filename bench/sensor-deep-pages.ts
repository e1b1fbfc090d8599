// Benchmark (b), P3: page 500 by cursor (the walk the docs recommend) costs <= 1.1x page 1, raw,
// page_size 1000, ~1 M readings, through the real app. Cold: the clock jumps an hour before every
// request, so no cached count helps. Page 500 by number for contrast.
//   node --import tsx bench/sensor-deep-pages.ts [--quick] [--profile postgres|timescale]
import * as script from './kit/sensor-script.js';
import { fixed } from './kit/statistics.js';

const UNITS = 15;
const DAYS = 365;
// a cold page takes milliseconds: the median of 15 rounds moved between runs by more than the margin, of 41 not
const ROUNDS = script.quick ? 7 : 41;
const TARGET = 1.1;
const HOUR = 3_600_000;
const WINDOW = 'start_date=2025-01-01&end_date=2025-12-31';
const P3 = { key: 'P3', name: `page 500 by cursor vs page 1 at page_size 1000 (target <= ${TARGET}x)` };
await script.run({ label: 'pages', targets: [P3] }, async (db) => {
  const { app, clock, headers } = await script.storeWithApp(db, UNITS, DAYS);
  type Page = { data: { timestamp: string }[]; meta: { pagination: { total_count: number; next_cursor: string | null } } };
  const get = async (query: string) => {
    const response = await app.inject({ method: 'GET', url: `/api/v1/sensor-data?${WINDOW}&page_size=1000&${query}`, headers });
    if (response.statusCode !== 200) throw new Error(`${query}: ${response.statusCode} ${response.body}`);
    return response.json() as Page;
  };
  const [first, deep] = [await get('page=1'), await get('page=500')];
  // page 500 of a walk by cursor: the cursor page 499 gave (a walk's position is the same by either way while nothing lands)
  const cursor = (await get('page=499')).meta.pagination.next_cursor!;
  if ((await get(`cursor=${cursor}`)).data[0]?.timestamp !== deep.data[0]?.timestamp) throw new Error('page 500 by cursor is not page 500');
  const queries = { first: 'page=1', deep: 'page=500', cursor: `cursor=${cursor}` };
  const cold = await script.alternate(ROUNDS, ['first', 'deep', 'cursor'] as const, (kind) => {
    clock.jump(HOUR);
    return script.msOf(() => get(queries[kind]));
  });
  const { first: firstMs, deep: deepMs, cursor: cursorMs } = script.medians(cold);
  const ratio = cursorMs / firstMs;
  return [
    {
      ...P3,
      pass: ratio <= TARGET,
      measured: `${fixed(ratio, 2)}x (${fixed(cursorMs, 2)} ms by cursor vs ${fixed(firstMs, 2)} ms)`,
      ratio,
      detail: `median of ${ROUNDS}, cold; ${first.meta.pagination.total_count} readings; by number ${fixed(deepMs / firstMs, 2)}x; ${script.profile} profile`,
    },
  ];
});
