// Utilization refuses bad parameters with 400 invalid_request naming the parameter in details.field.
import t from 'tap';
import { badParameterHarness } from './bad-parameters.js';

const { get, expect400, sharedParameterCases } = await badParameterHarness(t, '/api/v1/analytics/utilization', 'utilization');

t.test('the shared parameters', async (t) => {
  await sharedParameterCases(t);
  await expect400(t, 'coolingunit=1', 'coolingunit', /Unknown/);
  await expect400(t, 'cooling_unit_id=1&cooling_unit_id=2', 'cooling_unit_id');
  await expect400(t, 'cooling_unit_id=1;DROP TABLE api_tokens', 'cooling_unit_id');
});

t.test('valid edge values pass', async (t) => {
  for (const query of ['period=week', 'page_size=1000', 'start_date=2024-03-10&end_date=2025-03-10', 'page=999']) {
    t.equal((await get(query)).statusCode, 200, query);
  }
});
