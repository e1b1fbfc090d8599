// verifyWebhook (@coldtrack/client) on real deliveries of the service: a partner's receiver
// verifies them with the package's function, during a secret rotation with either secret; an
// altered body, a wrong secret, an old or a future timestamp and missing headers are refused.
import t from 'tap';
import { verifyWebhook, WebhookVerificationError } from '@coldtrack/client';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { createWorld } from '../routes/api-tokens/setup.js';

const ENDPOINTS = '/api/v1/webhook-endpoints';
const world = await createWorld(t, { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' });
const receiver = await startReceiver(t);
const registered = await world.post(world.a.jwt, ENDPOINTS, { url: receiver.url, event_types: ['api_token.created'] });
const { id: endpointId, secret } = registered.json<{ id: string; secret: string }>();
const token = await world.createToken(world.a.jwt, { name: 'verified' });
const [delivery] = await receiver.waitFor(1);
const headers = delivery!.headers;
const now = new Date(Number(headers['webhook-timestamp']) * 1000);

t.test('a real delivery verifies, and gives its event', async (t) => {
  const event = verifyWebhook(secret, delivery!.body, headers, { now });
  t.equal(event.id, headers['webhook-id']);
  t.equal(event.type, 'api_token.created');
  t.match(event.data, { api_token: { id: token.id, name: 'verified' } });
  // fetch's Headers and bytes work too
  const fetchHeaders = new Headers(Object.entries(headers).map(([name, value]) => [name, String(value)]));
  t.equal(verifyWebhook([secret], new TextEncoder().encode(delivery!.body), fetchHeaders, { now }).id, event.id);
});

t.test('refused: an altered body, another secret, a timestamp out of tolerance, missing headers', async (t) => {
  const refused = (what: string, run: () => unknown, message: RegExp) => t.throws(run, { name: 'WebhookVerificationError', message }, what);
  refused('a changed body', () => verifyWebhook(secret, delivery!.body.replace('verified', 'forged'), headers, { now }), /no signature/);
  refused(
    'another secret',
    () => verifyWebhook('whsec_' + Buffer.alloc(32, 7).toString('base64'), delivery!.body, headers, { now }),
    /no signature/,
  );
  refused('six minutes later', () => verifyWebhook(secret, delivery!.body, headers, { now: new Date(now.getTime() + 360_000) }), /too far/);
  refused(
    'six minutes earlier',
    () => verifyWebhook(secret, delivery!.body, headers, { now: new Date(now.getTime() - 360_000) }),
    /too far/,
  );
  refused(
    'no signature header',
    () => verifyWebhook(secret, delivery!.body, { ...headers, 'webhook-signature': undefined }, { now }),
    /missing/,
  );
  refused(
    'a signature of another id',
    () => verifyWebhook(secret, delivery!.body, { ...headers, 'webhook-id': 'msg_other' }, { now }),
    /no signature/,
  );
  t.ok(new WebhookVerificationError('x') instanceof Error);
});

t.test('during a secret rotation either secret verifies; after its grace period only the new one', async (t) => {
  const rotated = await world.post(world.a.jwt, `${ENDPOINTS}/${endpointId}/rotate-secret`, { grace_period_seconds: 600 });
  const fresh = rotated.json<{ secret: string }>().secret;
  await world.createToken(world.a.jwt);
  const [, during] = await receiver.waitFor(2);
  const at = new Date(Number(during!.headers['webhook-timestamp']) * 1000);
  t.equal(verifyWebhook(secret, during!.body, during!.headers, { now: at }).type, 'api_token.created', 'the old secret');
  t.equal(verifyWebhook(fresh, during!.body, during!.headers, { now: at }).type, 'api_token.created', 'the new secret');

  world.clock.advance(601_000);
  await world.createToken(world.a.jwt);
  const [, , after] = await receiver.waitFor(3);
  const later = new Date(Number(after!.headers['webhook-timestamp']) * 1000);
  t.throws(
    () => verifyWebhook(secret, after!.body, after!.headers, { now: later }),
    { name: 'WebhookVerificationError' },
    'the old secret no longer',
  );
  t.equal(verifyWebhook(fresh, after!.body, after!.headers, { now: later }).type, 'api_token.created');
});
