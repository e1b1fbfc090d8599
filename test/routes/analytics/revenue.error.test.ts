// Revenue refuses bad parameters with 400 invalid_request naming the parameter in details.field.
import t, { type Test } from 'tap';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';
import { issueToken } from '../../helpers/tokens.js';

const ctx = await createTestApp(t);
ctx.clock.set(new Date('2025-03-10T12:00:00Z'));
const a = await createCompany(ctx.db.pool, 'Revenue errors');
const token = await issueToken(ctx, a.employeeId, { scopes: ['revenue'] });

async function expect400(t: Test, query: string, field: string, message?: RegExp) {
  const response = await ctx.app.inject({ method: 'GET', url: `/api/v1/analytics/revenue?${query}`, headers: token.headers });
  t.equal(response.statusCode, 400, query);
  const body = response.json() as { error: { code: string; message: string; details: { field: string } } };
  t.equal(body.error.code, 'invalid_request', query);
  t.equal(body.error.details.field, field, query);
  if (message) t.match(body.error.message, message, query);
}

t.test('payment_status must be paid, pending or all', async (t) => {
  await expect400(t, 'payment_status=bogus', 'payment_status', /paid, pending, or all/);
  await expect400(t, 'payment_status=PAID', 'payment_status');
  await expect400(t, 'payment_status=paid&payment_status=all', 'payment_status');
  await expect400(t, 'payment_status=', 'payment_status');
});

t.test('the shared parameters', async (t) => {
  await expect400(t, 'period=year', 'period', /must be one of day, week, or month/);
  await expect400(t, 'page=0', 'page');
  await expect400(t, 'page_size=1001', 'page_size');
  await expect400(t, 'page_size=ten', 'page_size');
  await expect400(t, 'start_date=2025-02-30', 'start_date');
  await expect400(t, 'start_date=2025-03-05&end_date=2025-03-01', 'end_date');
  await expect400(t, 'start_date=2024-01-01&end_date=2025-01-01', 'start_date', /366/);
  await expect400(t, 'cooling_unit_id=abc', 'cooling_unit_id');
  await expect400(t, 'paymentstatus=paid', 'paymentstatus', /Unknown/);
  await expect400(t, 'api_token=abc', 'api_token');
});

t.test('valid edge values pass', async (t) => {
  for (const query of ['payment_status=pending', 'page_size=1000', 'start_date=2024-03-10&end_date=2025-03-10', 'page=999']) {
    const response = await ctx.app.inject({ method: 'GET', url: `/api/v1/analytics/revenue?${query}`, headers: token.headers });
    t.equal(response.statusCode, 200, query);
  }
});
