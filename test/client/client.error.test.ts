// The typed client against the real service when it says no: 400, 401, 403 and 404 arrive as
// ColdtrackApiError with the service's status, code, message and details, after exactly one
// request each (never retried); for the management surface too.
import t, { type Test } from 'tap';
import { ColdtrackApiError, ColdtrackClient, type ClientEvent } from '@coldtrack/client';
import { createExportWorld } from './world.js';

const world = await createExportWorld(t, { readings: false });

/** A client counting the requests it sends. */
function counted(token: string) {
  const events: ClientEvent[] = [];
  const client = new ColdtrackClient({ baseUrl: world.baseUrl, token, onEvent: (event) => events.push(event) });
  return {
    client,
    requests: () => events.filter((event) => event.type === 'request').length,
    retries: () => events.filter((event) => event.type === 'retry').length,
  };
}

async function refusal(t: Test, call: () => Promise<unknown>) {
  const error = await call().then(
    () => null,
    (e: unknown) => e,
  );
  t.type(error, ColdtrackApiError);
  return error as ColdtrackApiError;
}

t.test('data endpoints', async (t) => {
  const cases: Array<[string, string, (client: ColdtrackClient) => Promise<unknown>, Partial<ColdtrackApiError>]> = [
    [
      '400: an aggregation that does not exist',
      world.token,
      (c) => c.sensorData({ aggregation: 'weekly' as never }),
      { status: 400, code: 'invalid_request', details: { field: 'aggregation' } },
    ],
    [
      '400: a window too long',
      world.token,
      (c) => c.sensorData({ start_date: '2020-01-01', end_date: '2025-12-31', aggregation: 'hourly' }),
      { status: 400, code: 'invalid_request' },
    ],
    ['401: a token that does not exist', `ctk_${'B'.repeat(49)}`, (c) => c.utilization(), { status: 401, code: 'unauthorized' }],
    [
      '403: a token without the scope',
      '',
      (c) => c.revenue(),
      { status: 403, code: 'insufficient_scope', details: { required_scope: 'revenue' } },
    ],
    [
      "404: another company's unit",
      world.token,
      (c) => c.sensorData({ cooling_unit_id: world.b.unitIds[0]! }),
      { status: 404, code: 'not_found' },
    ],
  ];
  const scoped = (await world.issue({ scopes: ['sensor_data'] })).token;
  for (const [name, token, call, expected] of cases) {
    const { client, requests, retries } = counted(token || scoped);
    const error = await refusal(t, () => call(client));
    t.match(error, expected, `${name}: ${error.status} ${error.code} "${error.message}"`);
    t.ok(error.requestId, `${name}: the service's request id (${error.requestId})`);
    t.equal(requests(), 1, `${name}: one request`);
    t.equal(retries(), 0, `${name}: no retry`);
  }
});

t.test('paginate() stops at the first refusal', async (t) => {
  const { client, requests } = counted(world.token);
  const walk = async () => {
    for await (const record of client.paginate('sensorData', { cooling_unit_id: world.b.unitIds[0]! })) void record;
  };
  t.match(await refusal(t, walk), { status: 404 });
  t.equal(requests(), 1);
});

t.test('token management', async (t) => {
  const jwt = await world.ctx.jwtFor(world.a.employeeId);
  const { client, requests } = counted(jwt);
  t.match(await refusal(t, () => client.tokens.create({ name: '', scopes: ['nope' as never] })), {
    status: 400,
    code: 'invalid_request',
    details: { field: 'name' },
  });
  t.match(await refusal(t, () => client.tokens.retrieve('00000000-0000-4000-8000-000000000000')), { status: 404, code: 'not_found' });
  t.match(await refusal(t, () => client.tokens.revoke('not-a-token-id')), { status: 404 });
  t.match(await refusal(t, () => client.auditEvents.list({ token_id: '00000000-0000-4000-8000-000000000000' })), {
    status: 404,
    code: 'not_found',
  });
  t.match(await refusal(t, () => client.auditEvents.list({ action: 'token.deleted' as never })), {
    status: 400,
    details: { field: 'action' },
  });
  t.equal(requests(), 5, 'one request each');
  const partner = counted(world.token);
  t.match(await refusal(t, () => partner.client.tokens.list()), { status: 401 }, 'an API token cannot manage tokens');
  t.equal(partner.requests(), 1);
});
