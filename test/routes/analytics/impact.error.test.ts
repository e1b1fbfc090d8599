// Impact refuses bad parameters with 400 invalid_request naming the parameter in details.field.
import t, { type Test } from 'tap';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';
import { issueToken } from '../../helpers/tokens.js';

const ctx = await createTestApp(t);
ctx.clock.set(new Date('2025-03-10T12:00:00Z'));
const a = await createCompany(ctx.db.pool, 'Impact errors');
const token = await issueToken(ctx, a.employeeId, { scopes: ['impact'] });

async function expect400(t: Test, query: string, field: string, message?: RegExp) {
  const response = await ctx.app.inject({ method: 'GET', url: `/api/v1/analytics/impact?${query}`, headers: token.headers });
  t.equal(response.statusCode, 400, query);
  const body = response.json() as { error: { code: string; message: string; details: { field: string } } };
  t.equal(body.error.code, 'invalid_request', query);
  t.equal(body.error.details.field, field, query);
  if (message) t.match(body.error.message, message, query);
}

t.test('location_id is a whole number; payment_status is not an impact parameter', async (t) => {
  await expect400(t, 'location_id=abc', 'location_id');
  await expect400(t, 'location_id=0', 'location_id');
  await expect400(t, 'location_id=1&location_id=2', 'location_id');
  await expect400(t, 'payment_status=paid', 'payment_status', /Unknown/);
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
  await expect400(t, 'locationid=1', 'locationid', /Unknown/);
  await expect400(t, 'api_token=abc', 'api_token');
});

t.test('valid edge values pass', async (t) => {
  for (const query of ['period=month', 'page_size=1000', 'start_date=2024-03-10&end_date=2025-03-10', 'page=999']) {
    const response = await ctx.app.inject({ method: 'GET', url: `/api/v1/analytics/impact?${query}`, headers: token.headers });
    t.equal(response.statusCode, 200, query);
  }
});
