// GET /api/v1/analytics/users, accepted requests: the envelope, pagination over buckets, and every
// figure of a small hand-built world (users.world.ts) against values computed by hand.
import t from 'tap';
import { issueToken } from '../../helpers/tokens.js';
import { A_GONE_DELETED_AT, GOLDEN_WINDOW, createUsersWorld, expectedRecords, type Expected, type UsersJson } from './users.world.js';

const world = await createUsersWorld(t);
const { a, b, c } = world;
const [a1, a2, a3] = a.unitIds as [number, number, number];
const [b1, b2] = b.unitIds as [number, number, number];
const tokenA = await issueToken(world, a.employeeId, { scopes: ['users'] });
const tokenB = await issueToken(world, b.employeeId, { scopes: ['users', 'impact'] });
const tokenC = await issueToken(world, c.employeeId, { scopes: ['users'] });

async function read(headers: Record<string, string>, query: string): Promise<UsersJson> {
  const response = await world.get(headers, query);
  if (response.statusCode !== 200) throw new Error(`${query}: ${response.statusCode} ${response.body}`);
  return response.json<UsersJson>();
}

// f9 (registered by opGone, joined 02-27) is in A's population, and aGone (deleted 03-06 12:00)
// is in the breakdown of every bucket that began before: through 03-06 by day
const aGone = a.deletedUnitId;
const aUnits = (periodStart: string) => (periodStart < A_GONE_DELETED_AT ? [a1, a2, a3, aGone] : [a1, a2, a3]);
const A_DAYS: Expected[] = [
  ['2026-02-25', '2026-02-25', 3, 1, 0, { [a1]: [1, 1, 0] }],
  ['2026-02-26', '2026-02-26', 4, 0, 1, {}],
  ['2026-02-27', '2026-02-27', 5, 1, 1, { [a2]: [1, 2, 0], [a3]: [1, 1, 0] }],
  ['2026-02-28', '2026-02-28', 5, 0, 0, {}],
  ['2026-03-01', '2026-03-01', 6, 0, 1, {}],
  ['2026-03-02', '2026-03-02', 6, 1, 0, { [a1]: [1, 1, 0] }],
  ['2026-03-03', '2026-03-03', 6, 1, 0, { [a1]: [1, 0, 1] }],
  ['2026-03-04', '2026-03-04', 6, 1, 0, { [aGone]: [1, 1, 0] }],
  ['2026-03-05', '2026-03-05', 6, 0, 0, {}],
  ['2026-03-06', '2026-03-06', 6, 0, 0, {}],
  ['2026-03-07', '2026-03-07', 6, 0, 0, {}],
  ['2026-03-08', '2026-03-08', 6, 0, 0, {}],
  ['2026-03-09', '2026-03-09', 6, 1, 0, { [a2]: [1, 0, 1] }],
  ['2026-03-10', '2026-03-10', 7, 1, 1, { [a3]: [1, 0, 1] }],
];

t.test('envelope: one record per bucket, meta echoes the filters in effect', async (t) => {
  const body = await read(tokenA.headers, `${GOLDEN_WINDOW}&period=week`);
  t.same(Object.keys(body).sort(), ['data', 'meta']);
  t.equal(body.meta.company_id, a.companyId);
  t.same(body.meta.filters, { start_date: '2026-02-25', end_date: '2026-03-10', period: 'week', cooling_unit_id: null, location_id: null });
  t.same(body.meta.pagination, { page: 1, page_size: 100, total_count: 3, total_pages: 1, has_next: false, has_previous: false });
  for (const record of body.data) {
    t.same(Object.keys(record).sort(), ['active_users', 'by_cooling_unit', 'period_end', 'period_start', 'registered_users', 'sign_ups']);
    // every live unit, ascending, and the deleted one in the weeks that began before its deletion
    t.same(
      record.by_cooling_unit.map((unit) => unit.cooling_unit_id),
      aUnits(record.period_start),
    );
  }
});

t.test('defaults: the last 30 days to today, by day', async (t) => {
  const body = await read(tokenA.headers, '');
  t.same(body.meta.filters, { start_date: '2026-02-14', end_date: '2026-03-15', period: 'day', cooling_unit_id: null, location_id: null });
  t.equal(body.meta.pagination.total_count, 30);
  t.equal(body.data.length, 30);
  t.equal(body.data[0]!.period_start, '2026-02-14');
  t.equal(body.data[29]!.period_end, '2026-03-15');
  // f5 joined 2026-03-11 00:00:00: registered from that day on
  t.equal(body.data.find((record) => record.period_start === '2026-03-10')!.registered_users, 7);
  t.equal(body.data.find((record) => record.period_start === '2026-03-11')!.registered_users, 8);
  t.equal(body.data.find((record) => record.period_start === '2026-03-11')!.active_users, 1, 'f1 at a2 at 00:00:00');
});

t.test('golden figures, company A, by day', async (t) => {
  const body = await read(tokenA.headers, `${GOLDEN_WINDOW}&period=day`);
  t.same(body.data, expectedRecords(A_DAYS, aUnits));
});

t.test('golden figures, company A, by ISO week (first and last week clipped to the window)', async (t) => {
  const body = await read(tokenA.headers, `${GOLDEN_WINDOW}&period=week`);
  const weeks: Expected[] = [
    ['2026-02-25', '2026-03-01', 6, 2, 3, { [a1]: [1, 1, 0], [a2]: [1, 2, 0], [a3]: [1, 1, 0] }],
    ['2026-03-02', '2026-03-08', 6, 3, 0, { [a1]: [2, 1, 1], [aGone]: [1, 1, 0] }],
    ['2026-03-09', '2026-03-10', 7, 2, 1, { [a2]: [1, 0, 1], [a3]: [1, 0, 1] }],
  ];
  t.same(body.data, expectedRecords(weeks, aUnits));
});

t.test('golden figures, company A, by month (clipped)', async (t) => {
  const body = await read(tokenA.headers, `${GOLDEN_WINDOW}&period=month`);
  const months: Expected[] = [
    ['2026-02-25', '2026-02-28', 5, 2, 2, { [a1]: [1, 1, 0], [a2]: [1, 2, 0], [a3]: [1, 1, 0] }],
    ['2026-03-01', '2026-03-10', 7, 5, 2, { [a1]: [2, 1, 1], [a2]: [1, 0, 1], [a3]: [1, 0, 1], [aGone]: [1, 1, 0] }],
  ];
  t.same(body.data, expectedRecords(months, aUnits));
});

t.test('golden figures, company B: a farmer of A who used a unit of B counts in B too', async (t) => {
  const weeks = await read(tokenB.headers, `${GOLDEN_WINDOW}&period=week`);
  t.equal(weeks.meta.company_id, b.companyId);
  t.same(
    weeks.data,
    expectedRecords(
      [
        ['2026-02-25', '2026-03-01', 3, 1, 2, { [b1]: [1, 1, 0] }],
        ['2026-03-02', '2026-03-08', 3, 3, 0, { [b1]: [1, 1, 0], [b2]: [2, 1, 1] }],
        ['2026-03-09', '2026-03-10', 3, 0, 0, {}],
      ],
      b.unitIds,
    ),
  );
  const months = await read(tokenB.headers, `${GOLDEN_WINDOW}&period=month`);
  t.same(
    months.data,
    expectedRecords(
      [
        ['2026-02-25', '2026-02-28', 2, 1, 1, { [b1]: [1, 1, 0] }],
        ['2026-03-01', '2026-03-10', 3, 3, 1, { [b1]: [1, 1, 0], [b2]: [2, 1, 1] }],
      ],
      b.unitIds,
    ),
  );
});

t.test('cooling_unit_id narrows the population and the breakdown to that unit', async (t) => {
  const body = await read(tokenA.headers, `${GOLDEN_WINDOW}&period=month&cooling_unit_id=${a1}`);
  t.equal(body.meta.filters.cooling_unit_id, a1);
  // a1's farmers: registered by opA1 (f1 f4 f5 f7) or checked in there (f1 f3)
  t.same(
    body.data,
    expectedRecords(
      [
        ['2026-02-25', '2026-02-28', 2, 1, 0, { [a1]: [1, 1, 0] }],
        ['2026-03-01', '2026-03-10', 4, 2, 2, { [a1]: [2, 1, 1] }],
      ],
      [a1],
    ),
  );
});

t.test('location_id with every unit of the company equals the company-wide answer', async (t) => {
  const all = await read(tokenA.headers, `${GOLDEN_WINDOW}&period=week`);
  const located = await read(tokenA.headers, `${GOLDEN_WINDOW}&period=week&location_id=${a.locationId}`);
  t.same(located.data, all.data);
  t.equal(located.meta.filters.location_id, a.locationId);
});

t.test('pagination walks the buckets: pages add up, no bucket twice, flags right', async (t) => {
  const seen: UsersJson['data'] = [];
  let page = 1;
  for (;;) {
    const body = await read(tokenA.headers, `${GOLDEN_WINDOW}&period=day&page_size=3&page=${page}`);
    const { pagination } = body.meta;
    t.equal(pagination.total_count, 14, `page ${page}: total_count`);
    t.equal(pagination.total_pages, 5, `page ${page}: total_pages`);
    t.equal(pagination.page, page);
    t.equal(pagination.page_size, 3);
    t.equal(pagination.has_previous, page > 1, `page ${page}: has_previous`);
    t.equal(pagination.has_next, page < 5, `page ${page}: has_next`);
    t.equal(body.data.length, page < 5 ? 3 : 2, `page ${page}: size`);
    seen.push(...body.data);
    if (!pagination.has_next) break;
    page += 1;
  }
  t.equal(page, 5);
  t.equal(new Set(seen.map((record) => record.period_start)).size, seen.length, 'no bucket twice');
  // a page answers exactly what the unpaged request answers for its buckets
  t.same(seen, expectedRecords(A_DAYS, aUnits));

  const past = await read(tokenA.headers, `${GOLDEN_WINDOW}&period=day&page_size=3&page=6`);
  t.same(past.data, []);
  t.same(past.meta.pagination, { page: 6, page_size: 3, total_count: 14, total_pages: 5, has_next: false, has_previous: true });
});

t.test('a company without live units: zeros and empty breakdowns, not an error', async (t) => {
  const body = await read(tokenC.headers, `${GOLDEN_WINDOW}&period=week`);
  t.equal(body.meta.company_id, c.companyId);
  t.same(
    body.data,
    expectedRecords(
      [
        ['2026-02-25', '2026-03-01', 0, 0, 0, {}],
        ['2026-03-02', '2026-03-08', 0, 0, 0, {}],
        ['2026-03-09', '2026-03-10', 0, 0, 0, {}],
      ],
      [],
    ),
  );
});

t.test('a longest window by day answers 366 buckets in one page', async (t) => {
  const body = await read(tokenA.headers, 'start_date=2025-03-11&end_date=2026-03-11&page_size=1000');
  t.equal(body.data.length, 366);
  t.equal(body.data[365]!.registered_users, 8);
  t.equal(
    body.data.reduce((sum, record) => sum + record.sign_ups, 0),
    8,
    'every sign-up of A once (f1..f7 and f9 joined in the window)',
  );
});
