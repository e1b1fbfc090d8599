// Revenue refuses bad parameters with 400 invalid_request naming the parameter in details.field.
import t from 'tap';
import { badParameterHarness } from './bad-parameters.js';

const { get, expect400, sharedParameterCases } = await badParameterHarness(t, '/api/v1/analytics/revenue', 'revenue');

t.test('payment_status must be paid, pending or all', async (t) => {
  await expect400(t, 'payment_status=bogus', 'payment_status', /paid, pending, or all/);
  await expect400(t, 'payment_status=PAID', 'payment_status');
  await expect400(t, 'payment_status=paid&payment_status=all', 'payment_status');
  await expect400(t, 'payment_status=', 'payment_status');
});

t.test('the shared parameters', async (t) => {
  await sharedParameterCases(t);
  await expect400(t, 'paymentstatus=paid', 'paymentstatus', /Unknown/);
});

t.test('valid edge values pass', async (t) => {
  for (const query of ['payment_status=pending', 'page_size=1000', 'start_date=2024-03-10&end_date=2025-03-10', 'page=999']) {
    t.equal((await get(query)).statusCode, 200, query);
  }
});
