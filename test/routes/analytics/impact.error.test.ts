// Impact refuses bad parameters with 400 invalid_request naming the parameter in details.field.
import t from 'tap';
import { badParameterHarness } from './bad-parameters.js';

const { get, expect400, sharedParameterCases } = await badParameterHarness(t, '/api/v1/analytics/impact', 'impact');

t.test('location_id is a whole number; payment_status is not an impact parameter', async (t) => {
  await expect400(t, 'location_id=abc', 'location_id');
  await expect400(t, 'location_id=0', 'location_id');
  await expect400(t, 'location_id=1&location_id=2', 'location_id');
  await expect400(t, 'payment_status=paid', 'payment_status', /Unknown/);
});

t.test('the shared parameters', async (t) => {
  await sharedParameterCases(t);
  await expect400(t, 'locationid=1', 'locationid', /Unknown/);
});

t.test('valid edge values pass', async (t) => {
  for (const query of ['period=month', 'page_size=1000', 'start_date=2024-03-10&end_date=2025-03-10', 'page=999']) {
    t.equal((await get(query)).statusCode, 200, query);
  }
});
