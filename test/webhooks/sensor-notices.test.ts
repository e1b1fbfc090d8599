// sensor_data.changed: readings loaded through the real ingest are told to the endpoints that want
// them, at most once a minute each, naming only the endpoint's units of its own company, with the
// change feed's cursors that read exactly those changes; two processes telling at once tell each
// change once.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestApp } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { loadReadings } from '../helpers/sensor-world.js';
import { issueToken } from '../helpers/tokens.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

const ENDPOINTS = '/api/v1/webhook-endpoints';
const env = { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' };

const ctx = await createTestApp(t, env);
const other = await createTestApp(t, env, { database: ctx.db });
await Promise.all([ctx.app.ready(), other.app.ready()]);
const a = await createCompany(ctx.db.pool, 'Notified Co');
const b = await createCompany(ctx.db.pool, 'Quiet Co');
const [a1, a2, a3] = a.unitIds as [number, number, number];
const token = await issueToken(ctx, a.employeeId, { scopes: ['sensor_data'] });

async function register(companyEmployee: number, url: string, units: number[] = []) {
  const jwt = await ctx.jwtFor(companyEmployee);
  const response = await ctx.app.inject({
    method: 'POST',
    url: ENDPOINTS,
    headers: { authorization: `Bearer ${jwt}` },
    payload: { url, event_types: ['sensor_data.changed'], cooling_unit_ids: units },
  });
  if (response.statusCode !== 201) throw new Error(response.body);
}

const everyUnit = await startReceiver(t);
const firstUnit = await startReceiver(t);
const otherCompany = await startReceiver(t);
await register(a.employeeId, everyUnit.url);
await register(a.employeeId, firstUnit.url, [a1]);
await register(b.employeeId, otherCompany.url);

const csv = (unit: number, minutes: number[]) =>
  'cooling_unit_id,specification_type,recorded_at,value\n' +
  minutes.map((minute) => `${unit},TEMPERATURE,${new Date(ctx.clock.now().getTime() - minute * 60_000).toISOString()},4.5`).join('\n');
const load = (text: string) => loadReadings(ctx.db, text, () => ctx.clock.now());
const tell = () =>
  Promise.all([ctx.app.webhookDispatcher!.notifySensorChangesNow(), other.app.webhookDispatcher!.notifySensorChangesNow()]);

interface Notice {
  cooling_unit_ids: number[];
  readings: number;
  since_cursor: string;
  until_cursor: string;
}
const changesSince = async (since: string) =>
  (await ctx.app.inject({ method: 'GET', url: `/api/v1/sensor-data/changes?since=${since}&page_size=1000`, headers: token.headers })).json<{
    data: Array<{ cooling_unit_id: number; new_readings: number }>;
  }>();

t.test('what landed is told once, to the endpoints whose units it touched, with the cursors that read it', async (t) => {
  await load(csv(a2, [30, 45]) + '\n' + csv(a3, [15]).split('\n').slice(1).join('\n'));
  await tell();
  const [notice] = await everyUnit.waitFor(1);
  t.equal(notice!.json.type, 'sensor_data.changed');
  const data = notice!.json.data as unknown as Notice;
  t.same(data.cooling_unit_ids, [a2, a3], 'the units that changed');
  t.equal(data.readings, 3);
  const feed = await changesSince(data.since_cursor);
  t.same([...new Set(feed.data.map((change) => change.cooling_unit_id))].sort(), [a2, a3], 'since_cursor reads those changes');
  t.equal(
    feed.data.reduce((sum, change) => sum + change.new_readings, 0),
    3,
  );
  t.same((await changesSince(data.until_cursor)).data, [], 'nothing after until_cursor yet');

  await sleep(600);
  t.equal(firstUnit.received.length, 0, 'the endpoint limited to another unit is not told');
  t.equal(otherCompany.received.length, 0, 'nor is another company');
  await tell();
  await sleep(600);
  t.equal(everyUnit.received.length, 1, 'told once, though two processes looked twice');
});

t.test('at most once a minute per endpoint; what lands meanwhile comes in the next notice', async (t) => {
  await load(csv(a1, [5]));
  await tell();
  const [toFirst] = await firstUnit.waitFor(1);
  t.same((toFirst!.json.data as unknown as Notice).cooling_unit_ids, [a1], "the unit endpoint's first notice");
  await sleep(600);
  t.equal(everyUnit.received.length, 1, 'the endpoint told less than a minute ago waits');

  ctx.clock.advance(61_000);
  other.clock.advance(61_000);
  await tell();
  const [, next] = await everyUnit.waitFor(2);
  const data = next!.json.data as unknown as Notice;
  t.same(data.cooling_unit_ids, [a1], 'the next notice has what landed meanwhile');
  t.equal(data.since_cursor, (everyUnit.received[0]!.json.data as unknown as Notice).until_cursor, 'and starts where the last ended');
  t.equal(otherCompany.received.length, 0);
});
