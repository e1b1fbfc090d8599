// Expiry reminders (api_token.expiring 30/7/1 days, api_token.expired) reach an endpoint exactly
// once per token and threshold, however many processes look for them: two apps of one deployment
// on one database, both writing reminders and both delivering, each with its own clock moved with
// the other's through the thresholds; then one is closed and a third started (a restart), which
// looks for reminders as it starts. The receiver must get each expected reminder once and nothing
// else (no moot threshold, no revoked token, no token expired long ago).
import t, { type Test } from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../src/time.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { BASE as TOKENS, createWorld } from '../routes/api-tokens/setup.js';

const ENDPOINTS = '/api/v1/webhook-endpoints';
const REMINDERS = ['api_token.expiring', 'api_token.expired'];
const env = { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' };

t.test('each reminder once per token and threshold, across two instances and a restart', async (t) => {
  const world = await createWorld(t, env);
  const second = await createTestApp(t, env, { database: world.db });
  let apps: TestApp[] = [world, second];
  const receiverA = await startReceiver(t, '/a');
  const createdOnlyB = await startReceiver(t, '/b-created');
  const remindersB = await startReceiver(t, '/b-reminders');

  // Tokens are made 12 days before T0 (expiry must be in the future when a token is created), and
  // before any endpoint wants reminders: none is written until one does.
  const created = world.clock.now().getTime();
  const T0 = created + 12 * DAY_MS;
  // from here the two clocks always show the same time, as two hosts' clocks would
  second.clock.set(new Date(created));
  await second.app.ready();
  const label = new Map<string, string>();
  const token = async (name: string, expiresAt: number, jwt = world.a.jwt) => {
    const made = await world.createToken(jwt, { name, expires_at: new Date(expiresAt).toISOString() });
    label.set(made.id, name);
    return made;
  };
  const register = async (jwt: string, receiver: Receiver, eventTypes: string[]) => {
    // the first app serves the API throughout: it is not the one restarted
    const response = await world.post(jwt, ENDPOINTS, { url: receiver.url, event_types: eventTypes });
    t.equal(response.statusCode, 201, `an endpoint for ${eventTypes.join(', ')} registered`);
  };
  await token('in40d', T0 + 40 * DAY_MS);
  await token('in10d', T0 + 10 * DAY_MS);
  await token('in5d', T0 + 5 * DAY_MS);
  await token('in12h', T0 + 12 * HOUR_MS);
  await token('expired2d', T0 - 2 * DAY_MS);
  await token('expired10d', T0 - 10 * DAY_MS);
  const revoked = await token('revoked', T0 + 3 * DAY_MS);
  t.equal((await world.post(world.a.jwt, `${TOKENS}/${revoked.id}/revoke`)).statusCode, 200);
  // company B: an endpoint that wants token creations only, so no reminder is for it
  await register(world.b.jwt, createdOnlyB, ['api_token.created']);
  await token('b-in5d', T0 + 5 * DAY_MS, world.b.jwt);

  /** Deliveries claimed and not yet answered (or whose answer is not recorded yet). */
  const underWay = async () =>
    (
      await world.db.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending' AND leased_until IS NOT NULL",
      )
    ).rows[0]!.n;
  /**
   * Both (all live) clocks to `at`, then each app claims what is due; reminders come on their 250 ms
   * tick. Only once no delivery is under way: a clock that jumps days past an attempt's lease
   * while it waits for its answer (a loaded machine) would have the other app send it again, as
   * for a process that died, which real time never does in the middle of an attempt.
   */
  const moveTo = async (at: number) => {
    for (let waited = 0; (await underWay()) > 0 && waited < 15_000; waited += 50) await sleep(50);
    for (const app of apps) app.clock.set(new Date(at));
    await sleep(300);
    await Promise.all(apps.map((app) => app.app.webhookDispatcher!.pump()));
  };
  const expect = (receiver: Receiver, keys: string[], what: string) => expectOnce(t, receiver, keys, label, what);

  await moveTo(T0);
  await register(world.a.jwt, receiverA, REMINDERS);
  const atStart = ['in10d:30', 'in5d:7', 'in12h:1', 'expired2d:expired'];
  await moveTo(T0 + MINUTE_MS);
  await expect(
    receiverA,
    atStart,
    'at T0: the nearest threshold passed of each (in10d: 30, in5d: 7 with its 30 moot, in12h: 1), expired2d expired, nothing for expired10d or revoked',
  );
  await moveTo(T0 + 2 * MINUTE_MS);
  await expect(receiverA, atStart, 'a minute later, looked for again by both: nothing new');

  await moveTo(T0 + 13 * HOUR_MS);
  const after13h = [...atStart, 'in12h:expired'];
  await expect(receiverA, after13h, 'T0+13h: in12h expired');
  await moveTo(T0 + 3 * DAY_MS + MINUTE_MS);
  await expect(receiverA, [...after13h, 'in10d:7'], 'T0+3d: in10d 7 days');
  await moveTo(T0 + 4 * DAY_MS + MINUTE_MS);
  const after4d = [...after13h, 'in10d:7', 'in5d:1'];
  await expect(receiverA, after4d, 'T0+4d: in5d 1 day');

  // B had no endpoint wanting reminders: nothing was written for it, nor marked as sent
  const { rows: forB } = await world.db.pool.query<{ events: number; marked: number }>(
    `SELECT (SELECT count(*)::int FROM webhook_events WHERE company_id = $1 AND type = ANY ($2)) AS events,
            (SELECT count(*)::int FROM webhook_token_reminders r JOIN api_tokens k ON k.id = r.api_token_id WHERE k.company_id = $1) AS marked`,
    [world.b.companyId, REMINDERS],
  );
  t.same(forB[0], { events: 0, marked: 0 }, 'B: no reminder written or marked while no endpoint wanted one');
  t.same(
    createdOnlyB.received.map((delivery) => delivery.json.type),
    ['api_token.created'],
    "B's endpoint got its token's creation only",
  );
  await moveTo(T0 + 4 * DAY_MS + 12 * HOUR_MS);
  await register(world.b.jwt, remindersB, REMINDERS);
  await moveTo(T0 + 4 * DAY_MS + 12 * HOUR_MS + MINUTE_MS);
  await expect(remindersB, ['b-in5d:1'], 'B registers one at T0+4.5d: the reminder then due (1 day), not the 30 or 7 it missed');

  await moveTo(T0 + 5 * DAY_MS + MINUTE_MS);
  const after5d = [...after4d, 'in5d:expired'];
  await expect(receiverA, after5d, 'T0+5d: in5d expired');
  await expect(remindersB, ['b-in5d:1', 'b-in5d:expired'], 'and B its expired');
  const { rows: events } = await world.db.pool.query<{ company_id: number; n: number }>(
    'SELECT company_id, count(*)::int AS n FROM webhook_events WHERE type = ANY ($1) GROUP BY 1 ORDER BY 1',
    [REMINDERS],
  );
  t.same(
    events,
    [
      { company_id: world.a.companyId, n: after5d.length },
      { company_id: world.b.companyId, n: 2 },
    ],
    'each reminder written as one event (the outbox), not only delivered once',
  );

  // a restart: one instance stops, another starts on the same database and looks at once
  await second.app.close();
  const third = await createTestApp(t, env, { database: world.db });
  third.clock.set(new Date(T0 + 5 * DAY_MS + 2 * MINUTE_MS));
  world.clock.set(new Date(T0 + 5 * DAY_MS + 2 * MINUTE_MS));
  await third.app.ready();
  apps = [world, third];
  await sleep(300);
  await expect(receiverA, after5d, 'the new instance, looking as it starts: no repeat');
  await expect(remindersB, ['b-in5d:1', 'b-in5d:expired'], 'nor for B');

  await moveTo(T0 + 9 * DAY_MS + MINUTE_MS);
  await expect(receiverA, [...after5d, 'in10d:1'], 'T0+9d: in10d 1 day');
  await moveTo(T0 + 10 * DAY_MS + MINUTE_MS);
  const after10d = [...after5d, 'in10d:1', 'in10d:expired', 'in40d:30'];
  await expect(receiverA, after10d, 'T0+10d: in10d expired, in40d 30 days');
  await moveTo(T0 + 33 * DAY_MS + MINUTE_MS);
  await expect(receiverA, [...after10d, 'in40d:7'], 'T0+33d: in40d 7 days');
  await moveTo(T0 + 39 * DAY_MS + MINUTE_MS);
  await expect(receiverA, [...after10d, 'in40d:7', 'in40d:1'], 'T0+39d: in40d 1 day');
  await moveTo(T0 + 40 * DAY_MS + MINUTE_MS);
  const all = [...after10d, 'in40d:7', 'in40d:1', 'in40d:expired'];
  await expect(receiverA, all, 'T0+40d: in40d expired');
  await moveTo(T0 + 48 * DAY_MS);
  await expect(receiverA, all, 'T0+48d: nothing more');
  t.equal(createdOnlyB.received.length, 1, "B's created-only endpoint never got a reminder");
});

/**
 * Waits until `receiver` has as many deliveries as `keys`, then a little longer (two more ticks of
 * every app, time for a repeat to arrive), and checks it got exactly those reminders
 * (token:days, token:expired), each once by webhook-id and by token and threshold.
 */
async function expectOnce(t: Test, receiver: Receiver, keys: string[], label: Map<string, string>, what: string) {
  await receiver.waitFor(keys.length).catch(() => {});
  await sleep(600);
  const got = receiver.received.map((delivery) => {
    const data = delivery.json.data as { api_token: { id: string }; days_before_expiry?: number };
    const name = label.get(data.api_token.id) ?? data.api_token.id;
    return `${name}:${delivery.json.type === 'api_token.expired' ? 'expired' : data.days_before_expiry}`;
  });
  t.same([...got].sort(), [...keys].sort(), what);
  t.equal(new Set(got).size, got.length, `${what}: each token and threshold once`);
  t.equal(new Set(receiver.received.map((delivery) => delivery.headers['webhook-id'])).size, got.length, `${what}: each webhook-id once`);
}

t.test('a token rotated away gets no reminder; its replacement gets its own', async (t) => {
  const world = await createWorld(t, env);
  const receiver = await startReceiver(t);
  const expiresAt = new Date(world.clock.now().getTime() + 5 * DAY_MS).toISOString();
  const old = await world.createToken(world.a.jwt, { name: 'rotated', expires_at: expiresAt });
  // rotated with a day of grace: the old token now expires in a day, which the rotation said
  const rotated = await world.post(world.a.jwt, `${TOKENS}/${old.id}/rotate`, { grace_period_seconds: 86_400 });
  t.equal(rotated.statusCode, 201);
  const replacement = rotated.json<{ id: string }>().id;
  t.equal((await world.post(world.a.jwt, ENDPOINTS, { url: receiver.url, event_types: REMINDERS })).statusCode, 201);
  // reminders are looked for once a minute of the app's clock
  world.clock.advance(61_000);
  const [reminder] = await receiver.waitFor(1);
  t.match(reminder!.json, { type: 'api_token.expiring', data: { api_token: { id: replacement }, days_before_expiry: 7 } });
  world.clock.advance(2 * DAY_MS);
  await sleep(1_000);
  t.same(
    receiver.received.map((delivery) => (delivery.json.data.api_token as { id: string }).id),
    [replacement],
    'nothing for the old token: neither "expiring in 1 day" nor "expired"',
  );
});
