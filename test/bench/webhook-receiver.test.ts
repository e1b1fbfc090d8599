// The bench's loopback webhook receiver (bench/kit/webhook-receiver.ts), which P17 times: it
// records a delivery's first byte, not its last, and refuses one that is not signed with its secret.
// The deliveries here are signed by hand (node:crypto), not by the library the receiver verifies with.
import { createHmac, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import t from 'tap';
import { epochMs, startWebhookReceiver } from '../../bench/kit/webhook-receiver.js';

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

function signed(secret: string, webhookId: string, body: string) {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signature = createHmac('sha256', key).update(`${webhookId}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': webhookId, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}

/** POSTs the headers at once and the body `bodyDelayMs` later; resolves with the status and when the body was sent. */
function deliver(url: string, headers: Record<string, string>, body: string, bodyDelayMs: number) {
  return new Promise<{ status: number; bodySentAt: number }>((resolve, reject) => {
    const outgoing = request(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
    });
    let bodySentAt = 0;
    outgoing.on('error', reject);
    outgoing.on('response', (answer) => {
      answer.resume();
      answer.on('end', () => resolve({ status: answer.statusCode!, bodySentAt }));
    });
    outgoing.flushHeaders();
    setTimeout(() => {
      bodySentAt = epochMs();
      outgoing.end(body);
    }, bodyDelayMs);
  });
}

t.test('a signed delivery is recorded with the time of its first byte, its id and its type', async (t) => {
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  receiver.secret = newSecret();
  const body = JSON.stringify({ type: 'api_token.revoked', timestamp: new Date().toISOString(), data: { api_token: { id: 'x' } } });
  const sentAt = epochMs();
  const { status, bodySentAt } = await deliver(receiver.url, signed(receiver.secret, 'msg_1', body), body, 300);
  t.equal(status, 204);
  t.equal(receiver.deliveries.length, 1);
  const [delivery] = receiver.deliveries;
  t.match(delivery, { webhookId: 'msg_1', type: 'api_token.revoked', data: { api_token: { id: 'x' } } });
  t.ok(delivery!.firstByteAt >= sentAt, 'not before the request was sent');
  // the body came 300 ms after the headers: a time taken at the end would be after bodySentAt
  t.ok(delivery!.firstByteAt < bodySentAt - 200, `first byte ${(bodySentAt - delivery!.firstByteAt).toFixed(1)} ms before the body`);
  t.equal(receiver.badlySigned, 0);
});

t.test('a delivery signed with another secret, or a tampered body, is refused and counted', async (t) => {
  const receiver = await startWebhookReceiver();
  t.teardown(() => receiver.close());
  const body = JSON.stringify({ type: 'api_token.revoked', timestamp: new Date().toISOString(), data: {} });
  const early = await deliver(receiver.url, signed(newSecret(), 'msg_0', body), body, 0);
  t.equal(early.status, 400, 'before the secret is known nothing verifies');
  receiver.secret = newSecret();
  const other = await deliver(receiver.url, signed(newSecret(), 'msg_2', body), body, 0);
  t.equal(other.status, 400);
  const tampered = body.replace('"data":{}', '"data":{"x":1}');
  const altered = await deliver(receiver.url, signed(receiver.secret, 'msg_3', body), tampered, 0);
  t.equal(altered.status, 400);
  t.equal(receiver.badlySigned, 3);
  t.same(receiver.deliveries, [], 'none recorded as received');
  const good = await deliver(receiver.url, signed(receiver.secret, 'msg_4', body), body, 0);
  t.equal(good.status, 204, 'the right secret still verifies');
  t.equal(receiver.deliveries.length, 1);
});
