// Shared by the analytics endpoints' error tests: a token for the endpoint, an assertion that a
// query is a 400 invalid_request naming the right field, and the parameters every endpoint shares.
import type { Test } from 'tap';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';
import { issueToken } from '../../helpers/tokens.js';

export async function badParameterHarness(t: Test, endpoint: string, scope: string) {
  const ctx = await createTestApp(t);
  ctx.clock.set(new Date('2025-03-10T12:00:00Z'));
  const company = await createCompany(ctx.db.pool, `${scope} errors`);
  const token = await issueToken(ctx, company.employeeId, { scopes: [scope] });
  const get = (query: string) => ctx.app.inject({ method: 'GET', url: `${endpoint}?${query}`, headers: token.headers });

  async function expect400(t: Test, query: string, field: string, message?: RegExp) {
    const response = await get(query);
    t.equal(response.statusCode, 400, query);
    const body = response.json() as { error: { code: string; message: string; details: { field: string } } };
    t.equal(body.error.code, 'invalid_request', query);
    t.equal(body.error.details.field, field, query);
    if (message) t.match(body.error.message, message, query);
  }

  /** The window, period, pagination and id parameters of every analytics endpoint. */
  async function sharedParameterCases(t: Test) {
    await expect400(t, 'period=year', 'period', /must be one of day, week, or month/);
    await expect400(t, 'page=0', 'page');
    await expect400(t, 'page_size=1001', 'page_size');
    await expect400(t, 'page_size=ten', 'page_size');
    await expect400(t, 'start_date=2025-02-30', 'start_date');
    await expect400(t, 'start_date=2025-03-05&end_date=2025-03-01', 'end_date');
    await expect400(t, 'start_date=2024-01-01&end_date=2025-01-01', 'start_date', /366/);
    await expect400(t, 'cooling_unit_id=abc', 'cooling_unit_id');
    await expect400(t, 'api_token=abc', 'api_token');
  }

  return { ctx, company, get, expect400, sharedParameterCases };
}
