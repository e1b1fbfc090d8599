// The reporting window at the calendar's first day: end_date=0001-01-01 alone defaults its start
// to the first day there is, not 29 days before it in the year 0 (a 500 the OpenAPI tester found).
import t from 'tap';
import { formatDay, resolveWindow } from '../../src/data-surface/window.js';
import { createTestApp } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { issueToken } from '../helpers/tokens.js';

t.test('the default start stops at 0001-01-01', async (t) => {
  const window = resolveWindow({ end_date: '0001-01-10' }, new Date());
  t.same([formatDay(window.start), formatDay(window.end)], ['0001-01-01', '0001-01-10']);
  const normal = resolveWindow({ end_date: '2026-03-30' }, new Date());
  t.equal(formatDay(normal.start), '2026-03-01', 'elsewhere the default is end_date - 29 days');
});

t.test('end_date=0001-01-01 alone is an ordinary empty window on every data endpoint', async (t) => {
  const ctx = await createTestApp(t);
  const acme = await createCompany(ctx.db.pool, 'Early Co');
  const token = await issueToken(ctx, acme.employeeId);
  for (const path of [
    '/api/v1/sensor-data',
    '/api/v1/analytics/users',
    '/api/v1/analytics/utilization',
    '/api/v1/analytics/revenue',
    '/api/v1/analytics/impact',
  ]) {
    const reply = await ctx.app.inject({ method: 'GET', url: `${path}?end_date=0001-01-01`, headers: token.headers });
    t.equal(reply.statusCode, 200, `${path}: 200 (${reply.body.slice(0, 120)})`);
    t.match(reply.json().meta.filters, { start_date: '0001-01-01', end_date: '0001-01-01' });
  }
});
