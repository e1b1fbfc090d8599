// /api/v1/webhook-endpoints as an employee uses it: register (the secret once), list, retrieve,
// update, disable and enable, send a test, read the delivery log, replay, rotate the secret,
// delete; every change in the company's audit trail.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { startReceiver } from '../../helpers/webhook-receiver.js';
import type { WebhookEndpointJson } from '../../helpers/webhooks.js';
import { createWorld } from '../api-tokens/setup.js';

const BASE = '/api/v1/webhook-endpoints';
const env = { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' };
const KEYS = [
  'company_id',
  'cooling_unit_ids',
  'created_at',
  'created_by',
  'description',
  'disabled_at',
  'disabled_reason',
  'enabled',
  'event_types',
  'id',
  'previous_secret_expires_at',
  'updated_at',
  'url',
];

type Endpoint = WebhookEndpointJson;

const world = await createWorld(t, env);
const receiver = await startReceiver(t);
const patch = (url: string, payload: unknown) =>
  world.app.inject({ method: 'PATCH', url, headers: { authorization: `Bearer ${world.a.jwt}` }, payload: payload as object });
const waitFor = async <T>(read: () => Promise<T>, check: (value: T) => boolean, ms = 10_000): Promise<T> => {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > until) throw new Error(`never got there: ${JSON.stringify(value)}`);
    await sleep(50);
  }
};

let endpoint: Endpoint;

t.test('register: 201, Location, the secret once, the fields as given', async (t) => {
  const response = await world.post(world.a.jwt, BASE, {
    url: receiver.url,
    description: '  Partner ETL  ',
    event_types: ['api_token.created', 'api_token.revoked'],
    cooling_unit_ids: [world.a.unitIds[1]!, world.a.unitIds[0]!],
  });
  t.equal(response.statusCode, 201, response.body);
  endpoint = response.json<Endpoint>();
  t.equal(response.headers.location, `${BASE}/${endpoint.id}`);
  t.same(Object.keys(endpoint).sort(), [...KEYS, 'secret'].sort());
  t.match(endpoint, {
    url: receiver.url,
    description: 'Partner ETL',
    event_types: ['api_token.created', 'api_token.revoked'],
    cooling_unit_ids: [world.a.unitIds[0], world.a.unitIds[1]].sort((a, b) => a! - b!),
    enabled: true,
    disabled_reason: null,
    company_id: world.a.companyId,
    created_by: world.a.employeeId,
  });
  t.match(endpoint.secret, /^whsec_/);

  const again = await world.get(world.a.jwt, `${BASE}/${endpoint.id}`);
  t.equal(again.statusCode, 200);
  t.same(Object.keys(again.json()).sort(), KEYS.sort(), 'retrieve: no secret');
  t.notOk(again.body.includes(endpoint.secret!), 'the secret is never shown again');
});

t.test("list: the company's endpoints, newest first, in the envelope", async (t) => {
  world.clock.advance(1_000);
  const second = await world.post(world.a.jwt, BASE, { url: `${receiver.url}/second`, event_types: ['api_token.expiring'] });
  t.equal(second.statusCode, 201);
  const list = await world.get(world.a.jwt, `${BASE}?page_size=1`);
  t.equal(list.statusCode, 200);
  const body = list.json<{ data: Endpoint[]; meta: { company_id: number; pagination: { total_count: number; has_next: boolean } } }>();
  t.equal(body.data.length, 1);
  t.equal(body.data[0]!.id, second.json<Endpoint>().id, 'newest first');
  t.match(body.meta, { company_id: world.a.companyId, pagination: { total_count: 2, has_next: true } });
  t.equal(
    (
      await world.app.inject({
        method: 'DELETE',
        url: `${BASE}/${second.json<Endpoint>().id}`,
        headers: { authorization: `Bearer ${world.a.jwt}` },
      })
    ).statusCode,
    204,
  );
  t.equal((await world.get(world.a.jwt, BASE)).json<{ data: Endpoint[] }>().data.length, 1, 'deleted: gone from the list');
});

t.test('update: only what is given changes; disabled, nothing is sent nor queued; a replay catches up', async (t) => {
  const updated = await patch(`${BASE}/${endpoint.id}`, { description: 'Partner ETL (prod)', cooling_unit_ids: [] });
  t.equal(updated.statusCode, 200, updated.body);
  t.match(updated.json(), {
    description: 'Partner ETL (prod)',
    cooling_unit_ids: [],
    event_types: ['api_token.created', 'api_token.revoked'],
    enabled: true,
  });

  const disabled = await patch(`${BASE}/${endpoint.id}`, { enabled: false });
  t.match(disabled.json(), { enabled: false, disabled_reason: 'employee' });
  t.ok(disabled.json<{ disabled_at: string }>().disabled_at);
  const disabledAt = world.clock.now();
  await world.createToken(world.a.jwt);
  const enabled = await patch(`${BASE}/${endpoint.id}`, { enabled: true });
  t.match(enabled.json(), { enabled: true, disabled_reason: null, disabled_at: null });
  await sleep(800);
  t.equal(receiver.received.length, 0, 'the event of the disabled time was not queued');

  const since = await world.post(world.a.jwt, `${BASE}/${endpoint.id}/replay`, { since: disabledAt.toISOString() });
  t.same(since.json(), { replayed: 1 });
  const [delivered] = await receiver.waitFor(1);
  t.equal(delivered!.json.type, 'api_token.created', 'the replay sends it');
});

t.test('a test event, the delivery log, and replays', async (t) => {
  const sent = await world.post(world.a.jwt, `${BASE}/${endpoint.id}/test`);
  t.equal(sent.statusCode, 202);
  const { message_id: messageId } = sent.json<{ message_id: string }>();
  const [, test] = await receiver.waitFor(2);
  t.equal(test!.json.type, 'webhook.test');
  t.equal(test!.headers['webhook-id'], messageId, 'the answer named the delivery');

  type Log = { data: Array<{ id: number; message_id: string; event_type: string; status: string; attempts: number }> };
  const log = await waitFor(
    async () => (await world.get(world.a.jwt, `${BASE}/${endpoint.id}/deliveries`)).json<Log>(),
    (body) => body.data.length === 2 && body.data.every((entry) => entry.status === 'succeeded'),
  );
  t.same(
    log.data.map((entry) => entry.event_type),
    ['webhook.test', 'api_token.created'],
  );
  const filtered = await world.get(world.a.jwt, `${BASE}/${endpoint.id}/deliveries?status=pending`);
  t.equal(filtered.json<Log>().data.length, 0, 'none pending');

  const one = await world.post(world.a.jwt, `${BASE}/${endpoint.id}/deliveries/${log.data[1]!.id}/replay`);
  t.equal(one.statusCode, 202);
  const [, , replayed] = await receiver.waitFor(3);
  t.equal(replayed!.json.type, 'api_token.created');
  t.equal(replayed!.headers['webhook-id'], log.data[1]!.message_id, 'a replay keeps the webhook-id');

  const since = await world.post(world.a.jwt, `${BASE}/${endpoint.id}/replay`, {
    since: new Date(world.clock.now().getTime() - 3_600_000).toISOString(),
  });
  t.equal(since.statusCode, 202);
  t.same(since.json(), { replayed: 2 }, 'the token event and the test event');
  const all = await receiver.waitFor(5);
  t.same(
    all
      .slice(3)
      .map((delivery) => delivery.json.type)
      .sort(),
    ['api_token.created', 'webhook.test'],
  );
});

t.test('rotate the secret; delete; every change in the audit trail', async (t) => {
  const rotated = await world.post(world.a.jwt, `${BASE}/${endpoint.id}/rotate-secret`);
  t.equal(rotated.statusCode, 200);
  const body = rotated.json<Endpoint & { previous_secret_expires_at: string }>();
  t.match(body.secret, /^whsec_/);
  t.not(body.secret, endpoint.secret);
  t.equal(
    Date.parse(body.previous_secret_expires_at) - world.clock.now().getTime(),
    86_400_000,
    'the old secret signs on for a day by default',
  );

  const removed = await world.app.inject({
    method: 'DELETE',
    url: `${BASE}/${endpoint.id}`,
    headers: { authorization: `Bearer ${world.a.jwt}` },
  });
  t.equal(removed.statusCode, 204);
  t.equal(removed.body, '');
  t.equal((await world.get(world.a.jwt, `${BASE}/${endpoint.id}`)).statusCode, 404);

  const trail = await world.get(world.a.jwt, `/api/v1/audit-events?page_size=100`);
  const actions = trail
    .json<{ data: Array<{ action: string; token_id: string; actor: { id: string } }> }>()
    .data.filter((event) => event.action.startsWith('webhook_endpoint.') && event.token_id === endpoint.id)
    .map((event) => event.action);
  t.same(
    actions,
    [
      'webhook_endpoint.deleted',
      'webhook_endpoint.secret_rotated',
      'webhook_endpoint.updated',
      'webhook_endpoint.updated',
      'webhook_endpoint.updated',
      'webhook_endpoint.created',
    ],
    'newest first',
  );
});
