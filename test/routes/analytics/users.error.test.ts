// GET /api/v1/analytics/users, refused parameters: each a 400 invalid_request naming the
// parameter, never a 5xx, never data.
import t, { type Test } from 'tap';
import { issueToken } from '../../helpers/tokens.js';
import { createUsersWorld, type ErrorJson } from './users.world.js';

const world = await createUsersWorld(t);
const token = await issueToken(world, world.a.employeeId, { scopes: ['users'] });

async function expectInvalid(t: Test, query: string, field: string) {
  const response = await world.get(token.headers, query);
  const body = response.json<ErrorJson>();
  t.equal(response.statusCode, 400, `${query}: status`);
  t.equal(body.error?.code, 'invalid_request', `${query}: code`);
  t.equal(body.error?.details?.field, field, `${query}: details.field`);
  t.type(body.error?.message, 'string', `${query}: message`);
  t.notOk('data' in body, `${query}: no data`);
  return body;
}

t.test('dates', async (t) => {
  await expectInvalid(t, 'start_date=2026-02-30', 'start_date');
  await expectInvalid(t, 'end_date=2026-13-01', 'end_date');
  await expectInvalid(t, 'start_date=2026-2-1', 'start_date');
  await expectInvalid(t, 'start_date=20260201', 'start_date');
  await expectInvalid(t, 'start_date=2026-02-01T00:00:00Z', 'start_date');
  await expectInvalid(t, 'start_date=', 'start_date');
  const reversed = await expectInvalid(t, 'start_date=2026-03-10&end_date=2026-03-01', 'end_date');
  t.match(reversed.error.message, /before/);
  // 2025-01-01 .. 2026-01-02 is 367 days; 366 is the longest
  await expectInvalid(t, 'start_date=2025-01-01&end_date=2026-01-02', 'start_date');
  await expectInvalid(t, 'start_date=2024-03-14', 'start_date');
  t.equal((await world.get(token.headers, 'start_date=2025-01-01&end_date=2026-01-01')).statusCode, 200, '366 days is fine');
  // there is no year 0 (PostgreSQL refuses it); the years 1-99 are real years, not 1901-1999
  await expectInvalid(t, 'start_date=0000-12-31&end_date=0001-01-01', 'start_date');
  for (const [start, end] of [
    ['0001-01-01', '0001-01-31'],
    ['0050-02-27', '0050-03-01'],
    ['9999-12-01', '9999-12-31'],
  ]) {
    const response = await world.get(token.headers, `start_date=${start}&end_date=${end}&period=month`);
    t.equal(response.statusCode, 200, `${start}..${end}: 200`);
    const body = response.json<{
      data: { period_start: string; period_end: string }[];
      meta: { filters: { start_date: string; end_date: string } };
    }>();
    t.same([body.meta.filters.start_date, body.meta.filters.end_date], [start, end], `${start}..${end}: echoed as asked`);
    t.equal(body.data[0]?.period_start, start, `${start}..${end}: the first bucket starts on the first day asked`);
    t.equal(body.data.at(-1)?.period_end, end, `${start}..${end}: the last bucket ends on the last day asked`);
  }
});

t.test('period', async (t) => {
  for (const period of ['year', 'DAY', 'days', '', 'hour']) {
    const body = await expectInvalid(t, `period=${period}`, 'period');
    t.equal(body.error.message, 'period must be one of day, week, or month');
  }
});

t.test('pagination', async (t) => {
  await expectInvalid(t, 'page=0', 'page');
  await expectInvalid(t, 'page=-1', 'page');
  await expectInvalid(t, 'page=1.5', 'page');
  await expectInvalid(t, 'page=abc', 'page');
  await expectInvalid(t, 'page=99999999999', 'page');
  await expectInvalid(t, 'page=2147483648', 'page');
  const last = await world.get(token.headers, 'page=2147483647');
  t.equal(last.statusCode, 200, 'the largest page number is a page');
  t.same(last.json<{ data: unknown[] }>().data, [], 'past the last page: empty data');
  await expectInvalid(t, 'page_size=0', 'page_size');
  await expectInvalid(t, 'page_size=1001', 'page_size');
  await expectInvalid(t, 'page_size=1e3', 'page_size');
  t.equal((await world.get(token.headers, 'page_size=1000')).statusCode, 200);
});

t.test('unit and location ids', async (t) => {
  for (const value of ['1.5', 'abc', '-1', '0', '0x10', '2147483648', '']) {
    await expectInvalid(t, `cooling_unit_id=${value}`, 'cooling_unit_id');
  }
  await expectInvalid(t, 'location_id=one', 'location_id');
});

t.test('SQL in parameters is a bad value, not SQL', async (t) => {
  await expectInvalid(t, `start_date=${encodeURIComponent("2026-01-01'; DROP TABLE users; --")}`, 'start_date');
  await expectInvalid(t, `cooling_unit_id=${encodeURIComponent('1 OR 1=1')}`, 'cooling_unit_id');
  await expectInvalid(t, `period=${encodeURIComponent("day' UNION SELECT user_code FROM users --")}`, 'period');
  await expectInvalid(t, `page_size=${encodeURIComponent('10; SELECT pg_sleep(10)')}`, 'page_size');
  const { rows } = await world.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM users');
  t.ok(rows[0]!.n > 0, 'users still there');
});

t.test('repeated parameters', async (t) => {
  await expectInvalid(t, 'page=1&page=2', 'page');
  await expectInvalid(t, 'start_date=2026-03-01&start_date=2026-03-02', 'start_date');
  await expectInvalid(t, 'period=day&period=week', 'period');
  await expectInvalid(t, `cooling_unit_id=${world.a.unitIds[0]}&cooling_unit_id=${world.a.unitIds[1]}`, 'cooling_unit_id');
});

t.test('unknown parameters', async (t) => {
  await expectInvalid(t, 'foo=1', 'foo');
  await expectInvalid(t, 'periods=week', 'periods');
  await expectInvalid(t, 'cooling_unit_ids=1', 'cooling_unit_ids');
  await expectInvalid(t, 'page=1&limit=10', 'limit');
});

t.test('a token in the query string is refused, not used', async (t) => {
  const response = await world.app.inject({ method: 'GET', url: `/api/v1/analytics/users?token=${token.token}` });
  t.equal(response.statusCode, 400);
  t.equal(response.json<ErrorJson>().error.details?.field, 'token');
  t.notOk(world.logs.join('').includes(token.token), 'token never logged');
});
