// Webhook deliveries end to end: the real app on a real PostgreSQL sends signed token events to
// receivers on loopback ports. Signatures are checked with svix's own verification (not the
// standardwebhooks package the service signs with); retries, Retry-After, redirects, timeouts,
// a rolled-back change and a secret rotation are played against the receivers.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook as SvixWebhook } from 'svix';
import { recordTokenEvent } from '../../src/audit/events.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import type { WebhookDeliveryJson } from '../helpers/webhooks.js';
import { BASE as TOKENS, createWorld, type World } from '../routes/api-tokens/setup.js';

const ENDPOINTS = '/api/v1/webhook-endpoints';
const TOKEN_EVENTS = ['api_token.created', 'api_token.rotated', 'api_token.revoked'];
const env = { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8', WEBHOOK_TIMEOUT_SECONDS: '1' };

async function register(world: World, body: Record<string, unknown>) {
  const response = await world.post(world.a.jwt, ENDPOINTS, body);
  if (response.statusCode !== 201) throw new Error(`register answered ${response.statusCode}: ${response.body}`);
  return response.json<{ id: string; secret: string }>();
}

interface DeliveryLog {
  data: WebhookDeliveryJson[];
}
const log = async (world: World, endpointId: string) =>
  (await world.get(world.a.jwt, `${ENDPOINTS}/${endpointId}/deliveries`)).json<DeliveryLog>();

/** Polls the delivery log until `check` holds (the sender works in the background). */
async function logUntil(world: World, endpointId: string, check: (entries: DeliveryLog['data']) => boolean, ms = 10_000) {
  const until = Date.now() + ms;
  for (;;) {
    const entries = (await log(world, endpointId)).data;
    if (check(entries)) return entries;
    if (Date.now() > until) throw new Error(`the delivery log never got there: ${JSON.stringify(entries)}`);
    await sleep(50);
  }
}

t.test('token events reach the endpoint signed, one at a time in the order of their changes, without secrets', async (t) => {
  const world = await createWorld(t, env);
  const receiver = await startReceiver(t);
  const endpoint = await register(world, { url: receiver.url, event_types: TOKEN_EVENTS, description: 'partner sync' });
  t.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'a Standard Webhooks secret, shown once');

  const token = await world.createToken(world.a.jwt, { name: 'ETL', scopes: ['users', 'revenue'] });
  await receiver.waitFor(1);
  const rotated = await world.post(world.a.jwt, `${TOKENS}/${token.id}/rotate`, { grace_period_seconds: 60 });
  t.equal(rotated.statusCode, 201);
  const replacement = rotated.json<{ id: string; token: string }>();
  await receiver.waitFor(2);
  t.equal((await world.post(world.a.jwt, `${TOKENS}/${replacement.id}/revoke`)).statusCode, 200);
  const got = await receiver.waitFor(3);

  t.same(
    got.map((delivery) => delivery.json.type),
    TOKEN_EVENTS,
    'created, rotated, revoked',
  );
  const verifier = new SvixWebhook(endpoint.secret);
  for (const delivery of got) {
    const headers = delivery.headers as Record<string, string>;
    t.match(headers['webhook-id'], /^msg_[0-9a-f]{32}$/);
    t.doesNotThrow(() => verifier.verify(delivery.body, headers), `${delivery.json.type}: verified by svix`);
    t.notOk(delivery.body.includes(token.token) || delivery.body.includes(replacement.token), 'no raw token in the payload');
    t.notOk(/token_hash|secret/.test(delivery.body), 'no hash or secret field');
  }
  t.equal(new Set(got.map((delivery) => delivery.headers['webhook-id'])).size, 3, 'each event its own webhook-id');
  t.match(got[0]!.json.data, { api_token: { id: token.id, name: 'ETL', scopes: ['users', 'revenue'] }, actor: { type: 'employee' } });
  t.match(got[1]!.json.data, { api_token: { id: token.id }, replaced_by: { id: replacement.id }, grace_period_seconds: 60 });
  t.match(got[2]!.json.data, { api_token: { id: replacement.id } });
  t.ok(got[2]!.json.data.api_token && (got[2]!.json.data.api_token as { revoked_at: string | null }).revoked_at, 'revoked_at set');

  const entries = await logUntil(world, endpoint.id, (list) => list.length === 3 && list.every((entry) => entry.status === 'succeeded'));
  t.same(
    entries.map((entry) => [entry.event_type, entry.attempts, entry.last_attempt?.status_code]),
    [
      ['api_token.revoked', 1, 200],
      ['api_token.rotated', 1, 200],
      ['api_token.created', 1, 200],
    ],
    'the log, newest first: each delivered at its first attempt',
  );

  // another company's employee sees none of it
  t.equal((await world.get(world.b.jwt, `${ENDPOINTS}/${endpoint.id}/deliveries`)).statusCode, 404);
});

t.test('a receiver answering 500 gets the event again after the backoff, with the same webhook-id', async (t) => {
  const world = await createWorld(t, env);
  const receiver = await startReceiver(t);
  receiver.answer = (n) => (n === 1 ? 500 : 200);
  const endpoint = await register(world, { url: receiver.url, event_types: ['api_token.created'] });
  await world.createToken(world.a.jwt);
  await receiver.waitFor(1);
  const [failed] = await logUntil(world, endpoint.id, (list) => list[0]?.last_attempt?.status_code === 500);
  t.match(failed, { status: 'pending', last_attempt: { status_code: 500, error: 'answered 500' } });
  const wait = Date.parse(failed!.next_attempt_at!) - world.clock.now().getTime();
  t.ok(wait >= 4_000 && wait <= 6_000, `the first retry 5 s +-20 % later (${wait} ms)`);

  await sleep(600);
  t.equal(receiver.received.length, 1, 'not sent again before its time');
  world.clock.advance(6_000);
  const [first, second] = await receiver.waitFor(2);
  t.equal(second!.headers['webhook-id'], first!.headers['webhook-id'], 'the same webhook-id: the receiver can dedupe');
  t.not(second!.headers['webhook-signature'], undefined);
  await logUntil(world, endpoint.id, (list) => list[0]?.status === 'succeeded' && list[0].attempts === 2);
});

t.test('Retry-After is honoured; a redirect is a failure and is not followed; a silent receiver times out', async (t) => {
  const world = await createWorld(t, env);
  const receiver = await startReceiver(t);
  const answers: Array<ReturnType<typeof receiver.answer>> = [
    { status: 429, headers: { 'retry-after': '120' } },
    { status: 302, headers: { location: 'http://127.0.0.1:1/elsewhere' } },
    'hang',
    200,
  ];
  receiver.answer = (n) => answers[n - 1] ?? 200;
  const endpoint = await register(world, { url: receiver.url, event_types: ['api_token.created'] });
  await world.createToken(world.a.jwt);
  await receiver.waitFor(1);
  let [entry] = await logUntil(world, endpoint.id, (list) => list[0]?.last_attempt?.status_code === 429);
  const wait = Date.parse(entry!.next_attempt_at!) - world.clock.now().getTime();
  t.ok(wait >= 119_000, `the retry waits the 120 s the endpoint asked for, not 5 s (${wait} ms)`);
  world.clock.advance(60_000);
  await sleep(600);
  t.equal(receiver.received.length, 1, 'nothing sent a minute later');

  world.clock.advance(61_000);
  await receiver.waitFor(2);
  [entry] = await logUntil(world, endpoint.id, (list) => list[0]?.last_attempt?.status_code === 302);
  t.match(entry!.last_attempt, { status_code: 302, error: 'answered 302: redirects are not followed' });

  world.clock.advance(40_000);
  await receiver.waitFor(3);
  // the attempt counts from its claim: its outcome is logged once the deadline ran out
  [entry] = await logUntil(world, endpoint.id, (list) => list[0]?.last_attempt?.error !== 'answered 302: redirects are not followed');
  t.match(entry, { attempts: 3, status: 'pending', last_attempt: { status_code: null, error: 'no answer within 1000 ms' } });

  world.clock.advance(3 * 60_000);
  await receiver.waitFor(4);
  await logUntil(world, endpoint.id, (list) => list[0]?.status === 'succeeded' && list[0].attempts === 4);
  t.equal(receiver.received.length, 4, 'the redirect target was never asked');
});

t.test('a change that rolls back writes no event and sends nothing', async (t) => {
  const world = await createWorld(t, env);
  const receiver = await startReceiver(t);
  await register(world, { url: receiver.url, event_types: ['api_token.revoked'] });
  const token = await world.createToken(world.a.jwt);
  const client = await world.db.pool.connect();
  try {
    await client.query('BEGIN');
    await recordTokenEvent(client, {
      companyId: world.a.companyId,
      action: 'token.revoked',
      tokenId: token.id,
      occurredAt: world.clock.now(),
      origin: { actor: { type: 'system', id: 'test' }, clientIp: null, userAgent: null, requestId: null },
    });
    const inside = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_deliveries');
    t.equal(inside.rows[0]!.n, 1, 'inside the transaction, the delivery is written with the change');
    await client.query('ROLLBACK');
  } finally {
    client.release();
  }
  const after = await world.db.pool.query<{ events: number; deliveries: number }>(
    'SELECT (SELECT count(*)::int FROM webhook_events) AS events, (SELECT count(*)::int FROM webhook_deliveries) AS deliveries',
  );
  t.same(after.rows[0], { events: 0, deliveries: 0 }, 'rolled back with it');
  await sleep(1_000);
  t.equal(receiver.received.length, 0, 'nothing was sent');
});

t.test('a secret rotation signs with both secrets through the grace period: no delivery a receiver cannot verify', async (t) => {
  const world = await createWorld(t, env);
  const receiver = await startReceiver(t);
  const endpoint = await register(world, { url: receiver.url, event_types: ['api_token.created'] });
  const rotated = await world.post(world.a.jwt, `${ENDPOINTS}/${endpoint.id}/rotate-secret`, { grace_period_seconds: 3600 });
  t.equal(rotated.statusCode, 200);
  const fresh = rotated.json<{ secret: string; previous_secret_expires_at: string }>();
  t.not(fresh.secret, endpoint.secret);
  t.ok(fresh.previous_secret_expires_at, 'the answer says until when the old secret signs');

  await world.createToken(world.a.jwt);
  const [during] = await receiver.waitFor(1);
  t.equal(String(during!.headers['webhook-signature']).split(' ').length, 2, 'two signatures');
  t.doesNotThrow(
    () => new SvixWebhook(endpoint.secret).verify(during!.body, during!.headers as Record<string, string>),
    'the old secret verifies',
  );
  t.doesNotThrow(
    () => new SvixWebhook(fresh.secret).verify(during!.body, during!.headers as Record<string, string>),
    'the new secret verifies',
  );

  world.clock.advance(3_601_000);
  await world.createToken(world.a.jwt);
  const [, after] = await receiver.waitFor(2);
  t.equal(String(after!.headers['webhook-signature']).split(' ').length, 1, 'one signature after the grace period');
  // svix checks the timestamp against the real clock: the test's clock moved an hour on
  t.ok(
    Math.abs(Number(after!.headers['webhook-timestamp']) * 1000 - world.clock.now().getTime()) < 5_000,
    'timestamped by the service clock',
  );
});

t.test('an endpoint gets at most 4 attempts at once, also when one claim finds more due', async (t) => {
  const world = await createWorld(t, env);
  const receiver = await startReceiver(t);
  receiver.answer = () => 'hang';
  await register(world, { url: receiver.url, event_types: ['api_token.created'] });
  // six events of six tokens in one commit: one claim finds them all due at once
  await world.db.pool.query(
    `INSERT INTO webhook_events (company_id, type, occurred_at, data, ordering_key)
     SELECT $1, 'api_token.created', $2, '{}', 'token-' || g FROM generate_series(1, 6) g`,
    [world.a.companyId, world.clock.now()],
  );
  await receiver.waitFor(4);
  await sleep(500);
  t.equal(receiver.received.length, 4, 'four under way, the other two wait for a slot');
  // the hung attempts time out (1 s): the two waiting are sent then
  await receiver.waitFor(6, 5_000);
  t.equal(new Set(receiver.received.map((delivery) => delivery.headers['webhook-id'])).size, 6, 'each event once so far');
});

t.test(
  'an attempt whose lease ran out unanswered is logged interrupted when the delivery is sent again; a late answer replaces it',
  async (t) => {
    // the attempt's deadline (3 s, real time) outlasts its lease on the test's clock, moved past it: as
    // a process killed mid-attempt leaves it, except that this one answers late
    const world = await createWorld(t, { ...env, WEBHOOK_TIMEOUT_SECONDS: '3' });
    const receiver = await startReceiver(t);
    receiver.answer = (n) => (n === 1 ? 'hang' : 200);
    const endpoint = await register(world, { url: receiver.url, event_types: ['api_token.created'] });
    await world.createToken(world.a.jwt);
    await receiver.waitFor(1);
    const attempts = async () =>
      (
        await world.db.pool.query<{ attempt: number; outcome: string; duration_ms: number | null; error: string | null }>(
          'SELECT attempt, outcome, duration_ms, error FROM webhook_attempts ORDER BY id',
        )
      ).rows;
    t.match(await attempts(), [{ attempt: 1, outcome: 'sending', duration_ms: null }], 'the attempt is in the log before its answer');
    t.match(
      (await log(world, endpoint.id)).data,
      [{ attempts: 1, interrupted_attempts: 0, last_attempt: null }],
      'not shown while under way',
    );

    world.clock.advance(14_000); // past the lease: the attempt's 3 s and 10 s
    await receiver.waitFor(2);
    const [entry] = await logUntil(world, endpoint.id, (list) => list[0]?.status === 'succeeded');
    t.match(entry, { attempts: 2, interrupted_attempts: 1, last_attempt: { outcome: 'succeeded', status_code: 200 } });
    t.match(
      await attempts(),
      [
        { attempt: 1, outcome: 'interrupted', duration_ms: null, error: /^interrupted: / },
        { attempt: 2, outcome: 'succeeded', duration_ms: Number },
      ],
      'the claim that sent it again marked the first attempt interrupted',
    );
    const metrics = (await world.app.inject({ method: 'GET', url: '/metrics' })).body;
    t.match(metrics, /^webhook_delivery_attempts_total\{outcome="interrupted"\} 1$/m, 'and counted it in the metrics');

    // the first attempt's deadline runs out: what it got (no answer) is logged in its row, the
    // delivery left as the second attempt made it
    await logUntil(world, endpoint.id, (list) => list[0]?.interrupted_attempts === 0, 5_000);
    t.match(await attempts(), [
      { attempt: 1, outcome: 'failed', error: 'no answer within 3000 ms' },
      { attempt: 2, outcome: 'succeeded' },
    ]);
    t.match((await log(world, endpoint.id)).data, [{ status: 'succeeded', attempts: 2, last_attempt: { outcome: 'succeeded' } }]);
  },
);
