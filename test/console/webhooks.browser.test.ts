// The console's Webhooks section in real Chromium against the real service, its sender and
// receivers on loopback ports (WEBHOOK_ALLOWED_NETWORKS=127.0.0.0/8): an employee registers an
// endpoint and reads its secret once (svix verifies a delivery with it), sends a test event and
// finds it in the delivery log, edits, disables and enables it, watches a failing receiver's
// delivery (its error, its next retry) and replays it, sees an endpoint the sender disabled after a
// day of failures stand out and brings it back with what it missed, rotates the secret and deletes
// the endpoint. Accessible (axe) in each state; screenshots under .tap/console-screenshots/.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { Webhook as SvixWebhook } from 'svix';
import { freePort } from '../../src/free-port.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import type { WebhookDeliveryJson, WebhookEndpointJson } from '../helpers/webhooks.js';
import { checkAccessibility, focused, focusSettles, pageHolds, screenshot, startConsole } from './helpers.js';

type Endpoint = WebhookEndpointJson;
type Delivery = WebhookDeliveryJson;

const BASE = '/api/v1/webhook-endpoints';
const world = await startConsole(t, { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' });
const { page, ctx, company, address, jwt } = world;
const receiver = await startReceiver(t);
let endpoint: Endpoint;
let secret = '';

const row = (id: string) => page.locator(`tr[data-endpoint-id="${id}"]`);
const deliveriesOf = async (id: string) => (await world.api<{ data: Delivery[] }>('GET', `${BASE}/${id}/deliveries`)).body.data;
const createToken = (name: string) => world.api<{ id: string }>('POST', '/api/v1/api-tokens', { name, scopes: ['users'] });

async function until<T>(read: () => Promise<T>, check: (value: T) => boolean, what: string, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} never happened: ${JSON.stringify(value)}`);
    await sleep(50);
  }
}

/** The delivery log's dialog for an endpoint, refreshed until `text` is in the row of `messageId`. */
async function logShows(messageId: string, text: RegExp) {
  const line = page.locator(`#delivery-rows tr[data-message-id="${messageId}"]`);
  await until(
    async () => {
      await page.getByRole('button', { name: 'Refresh', exact: true }).click();
      await page
        .locator('#deliveries-summary')
        .getByText(/newest first/)
        .waitFor();
      return (await line.count()) === 1 ? ((await line.textContent()) ?? '') : '';
    },
    (shown) => text.test(shown),
    `the log showing ${text} for ${messageId}`,
  );
  return line.locator('th, td').allTextContents();
}

/**
 * A delivery the receiver got, verified as a Standard Webhooks receiver would (svix's own code).
 * svix also refuses a webhook-timestamp 5 minutes from the real clock: the tests that verify run
 * before the one that moves the app's clock a day and more.
 */
function verifies(secretValue: string, got: Receiver['received'][number]) {
  try {
    new SvixWebhook(secretValue).verify(got.body, got.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

t.test('the header switches to Webhooks: none yet', async (t) => {
  await page.goto(`${address}/console#jwt=${jwt}`);
  await page.getByText('No tokens yet: create one.').waitFor();
  const tokens = page.getByRole('button', { name: 'Tokens', exact: true });
  const webhooks = page.getByRole('button', { name: 'Webhooks', exact: true });
  t.equal(await tokens.getAttribute('aria-current'), 'page', 'the tokens are on screen');
  await webhooks.click();
  await page.getByText('No endpoints yet: register one.').waitFor();
  t.equal(await webhooks.getAttribute('aria-current'), 'page', 'now the webhooks');
  t.equal(await tokens.getAttribute('aria-current'), null);
  t.notOk(await page.locator('#tokens').isVisible(), 'the token list is put away');
  t.equal(await focused(page), 'webhooks-title', 'focus on the section');
  t.equal(await page.locator('#webhook-summary').textContent(), '0 endpoints');
  await checkAccessibility(t, page, 'empty webhooks');
});

t.test('register: the form says what to fix; the service refuses a private address in its words', async (t) => {
  await page.getByRole('button', { name: 'Register an endpoint' }).click();
  t.equal(await focused(page), 'webhook-form-title', 'focus moves to the form');
  const form = page.locator('#webhook-form-section');
  await form.getByRole('button', { name: 'Register endpoint' }).click();
  t.equal(await page.locator('#webhook-form-error').textContent(), 'Give the URL the events are sent to.');
  t.equal(await focused(page), 'webhook-url', 'focus on the field at fault');
  await page.getByLabel('Endpoint URL').fill('hooks.partner.example');
  await form.getByRole('button', { name: 'Register endpoint' }).click();
  t.match(await page.locator('#webhook-form-error').textContent(), /^The URL must be a full https address/);
  await page.getByLabel('Endpoint URL').fill('https://10.1.2.3/hooks');
  await form.getByRole('button', { name: 'Register endpoint' }).click();
  t.equal(await page.locator('#webhook-form-error').textContent(), 'Choose at least one event type.');
  await page.getByLabel('api_token.created').check();
  await form.getByRole('button', { name: 'Register endpoint' }).click();
  await page
    .locator('#webhook-form-error')
    .getByText(/^url .*\.$/)
    .waitFor();
  t.match(await page.locator('#webhook-form-error').textContent(), /private|address|allowed/i, 'the service’s reason, as it words it');
  t.ok(await form.isVisible(), 'the form stays, with what was typed');
  t.equal(await page.getByLabel('Endpoint URL').inputValue(), 'https://10.1.2.3/hooks');
  t.equal((await world.api<{ data: Endpoint[] }>('GET', BASE)).body.data.length, 0, 'nothing registered');
  await screenshot(page, 'webhooks-01-refused');
});

t.test('register: URL, description, event types and units; the secret is shown once, copied, and gone on close', async (t) => {
  const [unitA] = company.unitIds;
  await page.getByLabel('Endpoint URL').fill(receiver.url);
  await page.getByLabel('Description (optional)').fill('Partner ERP: token alerts');
  await page.getByLabel('api_token.revoked').check();
  await page.getByLabel('Only the units chosen here').check();
  await page.locator('#webhook-unit-options').getByLabel('Console Cold unit A (Main market)').check();
  await screenshot(page, 'webhooks-02-form');
  await checkAccessibility(t, page, 'register form');
  await page.locator('#webhook-form-section').getByRole('button', { name: 'Register endpoint' }).click();

  const dialog = page.getByRole('dialog', { name: 'Copy the signing secret now' });
  await dialog.waitFor();
  secret = await dialog.getByLabel('Signing secret').inputValue();
  t.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'a Standard Webhooks secret');
  t.match(await dialog.textContent(), /You will not see this secret again: this is the only time it is shown/);
  t.equal(await focused(page), 'dialog:webhook-secret-dialog copy-webhook-secret', 'focus on Copy');
  await dialog.getByRole('button', { name: 'Copy secret' }).click();
  await dialog.getByText('Copied.').waitFor();
  t.equal(await page.evaluate<string>('navigator.clipboard.readText()'), secret, 'Copy puts the secret on the clipboard');
  await screenshot(page, 'webhooks-03-secret');
  await checkAccessibility(t, page, 'secret dialog');
  await dialog.getByRole('button', { name: 'I have stored it: close' }).click();
  t.notOk(await dialog.isVisible(), 'closed');
  t.notOk(await pageHolds(page, secret), 'the secret is nowhere in the page any more');
  t.notOk(await pageHolds(page, secret.slice(6, 24)), 'not even part of it');
  t.equal(await focusSettles(page, 'new-webhook'), 'new-webhook', 'focus back where the flow started');

  const [listed] = (await world.api<{ data: Endpoint[] }>('GET', BASE)).body.data;
  endpoint = listed!;
  t.match(endpoint, {
    url: receiver.url,
    description: 'Partner ERP: token alerts',
    event_types: ['api_token.created', 'api_token.revoked'],
    cooling_unit_ids: [unitA],
    enabled: true,
  });
  t.match(await page.locator('#webhook-notice').textContent(), `${receiver.url} is registered`);
  const cells = await row(endpoint.id).locator('th, td').allTextContents();
  t.match(cells[0], new RegExp(`^${receiver.url}Partner ERP: token alertsID ${endpoint.id.slice(0, 8)}$`), 'URL, description, id');
  t.equal(cells[1], 'api_token.createdapi_token.revoked');
  t.equal(cells[2], 'Console Cold unit A (Main market)');
  t.equal(cells[3], 'Enabled');
  t.equal(cells[4], 'One secret');
  t.match(cells[5], /^just now\d{4}-\d\d-\d\d \d\d:\d\d UTCby you$/);

  // the secret the dialog showed is the one deliveries are signed with
  await createToken('Signed for');
  const [delivered] = await receiver.waitFor(1);
  t.equal(delivered!.json.type, 'api_token.created');
  t.ok(verifies(secret, delivered!), 'svix verifies the delivery with the secret shown');
});

t.test('a test event: sent from the row, found in the delivery log, newest first', async (t) => {
  await row(endpoint.id)
    .getByRole('button', { name: `Send test ${endpoint.url}` })
    .click();
  await page
    .locator('#webhook-notice')
    .getByText(/^A test event \(webhook-id msg_[0-9a-f]{32}\) is on its way/)
    .waitFor();
  const messageId = /webhook-id (msg_[0-9a-f]{32})/.exec((await page.locator('#webhook-notice').textContent())!)![1]!;
  const got = await receiver.waitFor(2);
  t.equal(got[1]!.json.type, 'webhook.test');
  t.equal(got[1]!.headers['webhook-id'], messageId, 'the id the console named');

  await row(endpoint.id)
    .getByRole('button', { name: `Deliveries ${endpoint.url}` })
    .click();
  const dialog = page.getByRole('dialog', { name: `Deliveries to ${endpoint.url}` });
  await dialog.waitFor();
  const cells = await logShows(messageId, /Succeeded/);
  t.match(cells[0], /^webhook\.test(just now|in less than a minute)\d{4}-/, 'the event and when');
  t.equal(cells[1], messageId, 'its webhook-id');
  t.equal(cells[2], 'Succeeded');
  t.equal(cells[3], '1', 'one attempt');
  t.match(cells[4], /^HTTP 200/, 'the answer');
  t.match(cells[5], /^\d+ ms$/, 'how long it took');
  t.equal(cells[6], '—', 'no retry');
  const order = await page.locator('#delivery-rows tr').evaluateAll((rows) => rows.map((tr) => tr.querySelector('code')?.textContent));
  t.strictSame(order, ['webhook.test', 'api_token.created'], 'newest first');
  t.match(await page.locator('#deliveries-summary').textContent(), /^2 deliveries, newest first$/);
  await screenshot(page, 'webhooks-04-log');
  await checkAccessibility(t, page, 'delivery log');
  await dialog.getByRole('button', { name: 'Close', exact: true }).click();
  t.equal(await focusSettles(page, 'button'), 'button', 'focus back on the row’s button');
});

t.test('edit: only what changed is sent; nothing changed is said', async (t) => {
  await row(endpoint.id)
    .getByRole('button', { name: `Edit ${endpoint.url}` })
    .click();
  await page.getByRole('heading', { name: `Edit the endpoint ${endpoint.url}` }).waitFor();
  t.equal(await page.getByLabel('Description (optional)').inputValue(), 'Partner ERP: token alerts', 'filled in');
  t.ok(await page.getByLabel('api_token.revoked').isChecked());
  t.ok(await page.locator('#webhook-unit-options').getByLabel('Console Cold unit A (Main market)').isChecked());
  const save = page.locator('#webhook-form-section').getByRole('button', { name: 'Save changes' });
  await save.click();
  t.equal(await page.locator('#webhook-form-error').textContent(), 'Nothing is changed: change a field, or cancel.');
  await page.getByLabel('Description (optional)').fill('Partner ERP');
  await page.getByLabel('api_token.rotated').check();
  await page.getByLabel('Every unit of the company').check();
  await save.click();
  await page.locator('#webhook-notice').getByText(`${endpoint.url} is saved.`).waitFor();
  await row(endpoint.id).locator('td').nth(1).getByText('All units', { exact: true }).waitFor();
  const saved = (await world.api<Endpoint>('GET', `${BASE}/${endpoint.id}`)).body;
  t.match(saved, { description: 'Partner ERP', cooling_unit_ids: [], url: endpoint.url });
  t.strictSame([...saved.event_types].sort(), ['api_token.created', 'api_token.revoked', 'api_token.rotated']);
  const audit = await world.api<{ data: Array<{ token_id: string; details: Record<string, unknown> }> }>(
    'GET',
    '/api/v1/audit-events?action=webhook_endpoint.updated',
  );
  const [update] = audit.body.data;
  t.equal(update?.token_id, endpoint.id, 'one update, of this endpoint');
  t.strictSame(Object.keys(update!.details).sort(), ['cooling_unit_ids', 'description', 'event_types'], 'the URL was not sent');
});

t.test('disable, then enable with what it missed replayed', async (t) => {
  // a minute after what was sent so far: a replay since the disabling is only what it missed
  await world.setTime(new Date(ctx.clock.now().getTime() + 60_000));
  await row(endpoint.id)
    .getByRole('button', { name: `Disable ${endpoint.url}` })
    .click();
  await page.locator('#webhook-notice').getByText(`${endpoint.url} is disabled`).waitFor();
  await row(endpoint.id).locator('.state.disabled').waitFor();
  t.match(await row(endpoint.id).locator('td').nth(2).textContent(), /^Disabledby an employee(just now|in less than a minute)/);
  t.equal((await world.api<Endpoint>('GET', `${BASE}/${endpoint.id}`)).body.enabled, false);
  const before = receiver.received.length;
  await world.setTime(new Date(ctx.clock.now().getTime() + 1000));
  await createToken('While disabled');
  await sleep(600); // more than two polls of the sender
  t.equal(receiver.received.length, before, 'nothing is sent while disabled');
  t.equal((await deliveriesOf(endpoint.id)).length, 2, 'nor queued');

  await row(endpoint.id)
    .getByRole('button', { name: `Enable ${endpoint.url}` })
    .click();
  const dialog = page.getByRole('dialog', { name: 'Enable this endpoint?' });
  await dialog.waitFor();
  const replay = dialog.getByLabel(/Also replay everything since it was disabled \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)$/);
  t.notOk(await replay.isChecked(), 'an employee’s pause: no replay unless asked');
  await checkAccessibility(t, page, 'enable dialog');
  await replay.check();
  await dialog.getByRole('button', { name: 'Enable endpoint' }).click();
  await page
    .locator('#webhook-notice')
    .getByText(/is enabled: deliveries resume/)
    .waitFor();
  t.match(
    await page.locator('#webhook-notice').textContent(),
    /is enabled: deliveries resume\. 1 event since \d{4}-\d\d-\d\d \d\d:\d\d UTC queued again\.$/,
    'enabled, and the one event it missed queued again',
  );
  const got = await receiver.waitFor(before + 1);
  t.match(got.at(-1)!.json, { type: 'api_token.created', data: { api_token: { name: 'While disabled' } } }, 'the missed event is sent');
  await row(endpoint.id).locator('.state.enabled').waitFor();
  t.equal(await row(endpoint.id).locator('td').nth(2).textContent(), 'Enabled', 'listed as enabled');
});

t.test('a failing receiver: the log shows the error and the next retry; a replay sends it again', async (t) => {
  const flaky = await startReceiver(t, '/flaky');
  flaky.answer = () => 500;
  const refused = `http://127.0.0.1:${await freePort()}/nobody`;
  const made: Endpoint[] = [];
  for (const url of [flaky.url, refused]) {
    made.push((await world.api<Endpoint>('POST', BASE, { url, event_types: ['api_token.revoked'] })).body);
  }
  const [flakyEndpoint, refusedEndpoint] = made as [Endpoint, Endpoint];
  const { body: token } = await createToken('To revoke');
  await world.api('POST', `/api/v1/api-tokens/${token.id}/revoke`);
  await flaky.waitFor(1);
  const [first] = await until(
    () => deliveriesOf(flakyEndpoint.id),
    (list) => list[0]?.attempts === 1 && list[0].status === 'pending' && list[0].last_attempt !== null,
    'the first failed attempt',
  );

  await page.getByRole('button', { name: 'Webhooks', exact: true }).click();
  await row(flakyEndpoint.id)
    .getByRole('button', { name: `Deliveries ${flakyEndpoint.url}` })
    .click();
  let cells = await logShows(first!.message_id, /Pending/);
  t.equal(cells[2], 'Pending');
  t.equal(cells[3], '1');
  t.match(cells[4], /^HTTP 500(just now|in less than a minute)/, 'the answer code');
  const next = first!.next_attempt_at!;
  t.match(cells[6], `${next.slice(0, 10)} ${next.slice(11, 16)} UTC`, 'the next retry, as the API has it');
  t.match(cells[6], /^in less than a minute/, 'in about 5 seconds');
  await screenshot(page, 'webhooks-05-failing-delivery');

  flaky.answer = () => 200;
  await page.getByRole('button', { name: `Replay ${first!.message_id}` }).click();
  await page
    .locator('#deliveries-summary')
    .getByText(`api_token.revoked ${first!.message_id} is queued again from its first attempt.`)
    .waitFor();
  await flaky.waitFor(2);
  cells = await logShows(first!.message_id, /Succeeded/);
  t.equal(cells[3], '1', 'attempts count from the replay');
  t.match(cells[4], /^HTTP 200/);
  await page.getByRole('button', { name: 'Close', exact: true }).click();

  // nobody listening: no answer, and the reason in words
  const [lost] = await until(
    () => deliveriesOf(refusedEndpoint.id),
    (list) => list[0]?.last_attempt !== null && list[0]?.last_attempt !== undefined,
    'the refused attempt',
  );
  await row(refusedEndpoint.id)
    .getByRole('button', { name: `Deliveries ${refusedEndpoint.url}` })
    .click();
  cells = await logShows(lost!.message_id, /Pending/);
  t.match(cells[4], /^No answerconnection refused/, 'no answer: the connection was refused');
  await page.getByRole('button', { name: 'Close', exact: true }).click();

  // an attempt whose process was killed before it recorded the answer (the next claim marks it so,
  // test/webhooks/crash.test.ts): written here as that claim leaves it, the endpoint disabled so
  // that no later attempt hides it
  await world.api('PATCH', `${BASE}/${refusedEndpoint.id}`, { enabled: false });
  await ctx.db.pool.query(
    `WITH d AS (UPDATE webhook_deliveries SET attempts = attempts + 1 WHERE id = $1 RETURNING id, attempts)
     INSERT INTO webhook_attempts (delivery_id, attempt, started_at, outcome, error)
     SELECT id, attempts, now(), 'interrupted', 'interrupted: the sending process stopped before the answer was recorded' FROM d`,
    [lost!.id],
  );
  await row(refusedEndpoint.id)
    .getByRole('button', { name: `Deliveries ${refusedEndpoint.url}` })
    .click();
  cells = await logShows(lost!.message_id, /Interrupted/);
  t.match(cells[3], /^\d+1 interrupted$/, 'the attempts, one of them interrupted');
  t.match(cells[4], /^Interruptedthe sender stopped before the answer was recorded: the endpoint may have received it/);
  t.equal(cells[5], '—', 'no duration: not known');
  await page.getByRole('button', { name: 'Close', exact: true }).click();
  for (const { id } of made) await world.api('DELETE', `${BASE}/${id}`);
});

t.test('replay everything since a time, from the delivery log', async (t) => {
  // what the tests before sent it has arrived: the token "To revoke" created and revoked too
  await until(
    () => deliveriesOf(endpoint.id),
    (list) => list.length === 5 && list.every((delivery) => delivery.status === 'succeeded'),
    'every delivery so far',
  );
  await page.getByRole('button', { name: 'Webhooks', exact: true }).click();
  await row(endpoint.id)
    .getByRole('button', { name: `Deliveries ${endpoint.url}` })
    .click();
  const before = receiver.received.length;
  const field = page.getByLabel('Since (UTC)');
  t.equal(await field.inputValue(), new Date(ctx.clock.now().getTime() - 3_600_000).toISOString().slice(0, 16), 'an hour back');
  await field.fill(new Date(ctx.clock.now().getTime() + 3_600_000).toISOString().slice(0, 16));
  await page.getByRole('button', { name: 'Replay since then' }).click();
  t.equal(await page.locator('#deliveries-error').textContent(), 'Choose a time in the past.');
  await field.fill(new Date(ctx.clock.now().getTime() - 3_600_000).toISOString().slice(0, 16));
  await page.getByRole('button', { name: 'Replay since then' }).click();
  // the events it asked for since: 3 tokens created (one while it was disabled), one revoked, and the test
  await page
    .locator('#deliveries-summary')
    .getByText(/^5 events since \d{4}-\d\d-\d\d \d\d:\d\d UTC queued again\./)
    .waitFor();
  const got = await receiver.waitFor(before + 5);
  t.strictSame(
    got
      .slice(before)
      .map((delivery) => delivery.json.type)
      .sort(),
    ['api_token.created', 'api_token.created', 'api_token.created', 'api_token.revoked', 'webhook.test'],
    'sent again',
  );
  t.ok(
    got
      .slice(before)
      .every((delivery) => got.slice(0, before).some((earlier) => earlier.headers['webhook-id'] === delivery.headers['webhook-id'])),
    'each with the webhook-id it had',
  );
  await page.getByRole('button', { name: 'Close', exact: true }).click();
});

t.test('rotate the secret: the new one shown once; both sign during the grace period', async (t) => {
  await page.getByRole('button', { name: 'Webhooks', exact: true }).click();
  await row(endpoint.id)
    .getByRole('button', { name: `Rotate secret ${endpoint.url}` })
    .click();
  const dialog = page.getByRole('dialog', { name: 'Rotate the signing secret?' });
  await dialog.waitFor();
  await dialog.getByLabel('1 hour').check();
  await dialog.getByRole('button', { name: 'Rotate secret' }).click();
  const shown = page.getByRole('dialog', { name: 'Copy the signing secret now' });
  await shown.waitFor();
  const fresh = await shown.getByLabel('Signing secret').inputValue();
  t.match(fresh, /^whsec_/);
  t.not(fresh, secret, 'a new secret');
  t.match(await shown.textContent(), /The previous secret also signs every delivery until \d{4}-\d\d-\d\d \d\d:\d\d UTC \(in 1 hour\)/);
  await shown.getByRole('button', { name: 'I have stored it: close' }).click();
  t.notOk(await pageHolds(page, fresh), 'forgotten on close');
  await page
    .locator('#webhook-notice')
    .getByText(/signing secret of .* is rotated: the previous one also signs until/)
    .waitFor();
  await row(endpoint.id)
    .getByText(/^Rotated:/)
    .waitFor();
  t.match(await row(endpoint.id).locator('td').nth(3).textContent(), /^Rotated: the previous secret also signs until in 1 hour/);

  const before = receiver.received.length;
  await row(endpoint.id)
    .getByRole('button', { name: `Send test ${endpoint.url}` })
    .click();
  const [test] = (await receiver.waitFor(before + 1)).slice(before);
  t.ok(verifies(fresh, test!), 'verified with the new secret');
  t.ok(verifies(secret, test!), 'and with the old one, during the grace period');
});

t.test('an endpoint the sender disabled after a day of failures stands out, and comes back with what it missed', async (t) => {
  const down = await startReceiver(t, '/down');
  down.answer = () => 503;
  const { body: failing } = await world.api<Endpoint>('POST', BASE, {
    url: down.url,
    description: 'Warehouse sync',
    event_types: ['api_token.created'],
  });
  await createToken('Never arrives');
  // every retry, on the app's clock: the sender disables the endpoint after the last
  for (let attempt = 1; ; attempt++) {
    // attempted and recorded: failed for good, or due again later (a claimed one is due now)
    const [delivery] = await until(
      () => deliveriesOf(failing.id),
      (list) =>
        list[0]?.attempts === attempt &&
        (list[0].status === 'failed' || Date.parse(list[0].next_attempt_at ?? '') > ctx.clock.now().getTime()),
      `attempt ${attempt}`,
    );
    if (delivery!.status === 'failed') break;
    await world.setTime(new Date(delivery!.next_attempt_at!));
  }
  const disabled = await until(
    async () => (await world.api<Endpoint>('GET', `${BASE}/${failing.id}`)).body,
    (state) => state.disabled_reason === 'failing',
    'disabled for failing',
  );
  ctx.clock.advance(60_000);
  await world.setTime(ctx.clock.now());
  await createToken('Missed while disabled');

  // the header tells, from the token list too
  await page.getByRole('button', { name: 'Tokens', exact: true }).click();
  await page.reload();
  await page.getByRole('button', { name: 'Webhooks 1 failing' }).waitFor();
  await page.getByRole('button', { name: 'Webhooks 1 failing' }).click();
  const failingRow = row(failing.id);
  t.match(await failingRow.locator('td').nth(2).textContent(), /^Disabled: failing/);
  const help = page.locator(`tr[data-failing-endpoint-id="${failing.id}"]`);
  const text = (await help.textContent())!;
  t.match(text, `Nothing is sent to ${down.url}: its deliveries failed for over a day, so it was disabled`);
  t.match(text, `(${disabled.disabled_at!.slice(0, 10)} ${disabled.disabled_at!.slice(11, 16)} UTC)`);
  t.match(text, /Check the receiver: it must answer 2xx within 10 seconds\. Deliveries shows its last answer or error\./);
  t.match(text, /Enable it once the receiver works\./);
  t.match(text, /Replay everything since it was disabled, so the events it missed are sent/);
  t.match(await page.locator('#webhook-summary').textContent(), /, 1 disabled after failing$/);
  await screenshot(page, 'webhooks-06-disabled-failing');
  await checkAccessibility(t, page, 'an endpoint disabled after failing');

  down.answer = () => 200;
  const before = down.received.length;
  await failingRow.getByRole('button', { name: `Enable ${down.url}` }).click();
  const dialog = page.getByRole('dialog', { name: 'Enable this endpoint?' });
  const since = disabled.disabled_at!;
  const replay = dialog.getByLabel(`Also replay everything since it was disabled (${since.slice(0, 10)} ${since.slice(11, 16)} UTC)`);
  t.ok(await replay.isChecked(), 'after failing: the replay is ticked');
  await dialog.getByRole('button', { name: 'Enable endpoint' }).click();
  await page
    .locator('#webhook-notice')
    .getByText(/1 event since .* queued again\.$/)
    .waitFor();
  const got = await down.waitFor(before + 1);
  t.match(got.at(-1)!.json, { type: 'api_token.created', data: { api_token: { name: 'Missed while disabled' } } });
  await page.getByText('2 endpoints', { exact: true }).waitFor();
  t.ok(await page.locator('#failing-badge').isHidden(), 'the header no longer counts it');
  t.equal(await help.count(), 0, 'nor does the list single it out');
  await world.api('DELETE', `${BASE}/${failing.id}`);
});

t.test('delete: a confirmation first (Escape cancels), then it is gone', async (t) => {
  const remove = row(endpoint.id).getByRole('button', { name: `Delete ${endpoint.url}` });
  await remove.click();
  const dialog = page.getByRole('dialog', { name: 'Delete this endpoint?' });
  await dialog.waitFor();
  t.equal(await focused(page), 'dialog:webhook-delete-dialog cancel-webhook-delete', 'focus on Cancel, the safe choice');
  t.match(await dialog.textContent(), /its delivery log is removed\. This cannot be undone\./);
  await page.keyboard.press('Escape');
  t.notOk(await dialog.isVisible(), 'Escape closes it');
  t.equal((await world.api('GET', `${BASE}/${endpoint.id}`)).status, 200, 'nothing deleted');
  await remove.click();
  await dialog.getByRole('button', { name: 'Delete endpoint' }).click();
  await page.locator('#webhook-notice').getByText(`${endpoint.url} is deleted: nothing more is sent to it.`).waitFor();
  await page.getByText('No endpoints yet: register one.').waitFor();
  t.equal((await world.api('GET', `${BASE}/${endpoint.id}`)).status, 404, 'gone from the service');
});

t.test('an endpoint deleted elsewhere: the service’s 404, said above the list', async (t) => {
  const { body: other } = await world.api<Endpoint>('POST', BASE, { url: receiver.url, event_types: ['api_token.expired'] });
  await page.getByRole('button', { name: 'Webhooks', exact: true }).click();
  await row(other.id).waitFor();
  await world.api('DELETE', `${BASE}/${other.id}`);
  await row(other.id)
    .getByRole('button', { name: `Send test ${other.url}` })
    .click();
  await page.locator('#webhook-list-error').getByText('No webhook endpoint with this id.').waitFor();
  t.pass('said in the list’s error region');
});

t.test('no secret or JWT in a URL or the storage; no console error but the 4xx this file asked for', async (t) => {
  t.notOk(
    world.requests.some((url) => url.includes(jwt) || url.includes('whsec_') || url.includes(encodeURIComponent('whsec_'))),
    'no request URL carries a secret',
  );
  const stored = await page.evaluate<string>(
    'JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie',
  );
  t.notMatch(stored, /whsec_/, 'no secret in the storage or cookies');
  t.notOk(
    world.requests.some((url) => !url.startsWith(address) && !url.startsWith('data:')),
    'no other origin',
  );
  t.notOk(
    ctx.logs.some((line) => line.includes(secret)),
    'the first secret never reached the service’s logs',
  );
  const problems = world.problems.filter((text) => !/^Failed to load resource: the server responded with a status of 4\d\d/.test(text));
  t.strictSame(problems, [], 'no other console error (no CSP violation, no script error)');
});
