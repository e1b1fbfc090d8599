// /api/v1/webhook-endpoints against misuse: URLs that would make the service reach into its own
// network (refused at registration, and again at delivery when the address rules change), another
// company's endpoints (404, never 403), bad input (400, nothing changed), no JWT (401), and the
// signing secret never in a log line.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestApp } from '../../helpers/app.js';
import { startReceiver } from '../../helpers/webhook-receiver.js';
import { createWorld } from '../api-tokens/setup.js';

const BASE = '/api/v1/webhook-endpoints';

t.test(
  'URLs to loopback, private, link-local, metadata and non-public addresses are refused; plain http only to allowed networks',
  async (t) => {
    const world = await createWorld(t);
    const refused: Array<[string, RegExp]> = [
      ['http://127.0.0.1:8080/hooks', /loopback/],
      ['https://127.0.0.1/hooks', /loopback/],
      ['https://localhost/hooks', /loopback/],
      ['https://[::1]/hooks', /loopback/],
      ['https://10.1.2.3/hooks', /private/],
      ['https://192.168.0.10/hooks', /private/],
      ['https://172.16.5.5/hooks', /private/],
      ['https://169.254.169.254/latest/meta-data/', /linkLocal/],
      ['https://[fe80::1]/hooks', /linkLocal/],
      ['https://[fd00:ec2::254]/hooks', /uniqueLocal/],
      ['https://100.64.0.1/hooks', /carrierGradeNat/],
      ['https://0.0.0.0/hooks', /unspecified/],
      ['https://[::ffff:127.0.0.1]/hooks', /loopback/],
      ['https://224.0.0.1/hooks', /multicast/],
      ['http://93.184.216.34/hooks', /must be an https URL/],
      ['ftp://93.184.216.34/hooks', /must be an https URL/],
      ['https://user:pass@93.184.216.34/hooks', /user name or password/],
      ['not a url', /absolute https URL/],
      ['https://no-such-host.invalid/hooks', /does not resolve/],
    ];
    for (const [url, why] of refused) {
      const response = await world.post(world.a.jwt, BASE, { url, event_types: ['api_token.created'] });
      t.equal(response.statusCode, 400, `${url}: 400`);
      t.match(response.json(), { error: { code: 'invalid_request', details: { field: 'url' } } });
      t.match(response.json<{ error: { message: string } }>().error.message, why, `${url}: ${why}`);
    }
    const { rows } = await world.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_endpoints');
    t.equal(rows[0]!.n, 0, 'none was registered');

    const publicOne = await world.post(world.a.jwt, BASE, { url: 'https://93.184.216.34/hooks', event_types: ['api_token.created'] });
    t.equal(publicOne.statusCode, 201, 'a public https address is accepted');
  },
);

t.test('an address allowed at registration but not at delivery is not sent to', async (t) => {
  const receiver = await startReceiver(t);
  const allowing = await createWorld(t, { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8', WEBHOOK_DELIVERY: 'off' });
  const registered = await allowing.post(allowing.a.jwt, BASE, { url: receiver.url, event_types: ['api_token.created'] });
  t.equal(registered.statusCode, 201);
  // a second process of the deployment, whose SRE no longer allows loopback, sends it
  const strict = await createTestApp(t, {}, { database: allowing.db });
  await strict.app.ready();
  await allowing.createToken(allowing.a.jwt);
  const until = Date.now() + 10_000;
  let log: { data: Array<{ last_attempt: { error: string | null } | null; status: string }> };
  do {
    await sleep(100);
    log = (await allowing.get(allowing.a.jwt, `${BASE}/${registered.json<{ id: string }>().id}/deliveries`)).json();
  } while (!log.data[0]?.last_attempt && Date.now() < until);
  t.match(log.data[0], { status: 'pending', last_attempt: { error: /^refused: 127\.0\.0\.1 is a loopback address/ } });
  t.equal(receiver.received.length, 0, 'nothing reached the receiver');
});

t.test("another company's endpoint is 404 on every route, and unchanged", async (t) => {
  const world = await createWorld(t, { WEBHOOK_DELIVERY: 'off', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' });
  const created = await world.post(world.a.jwt, BASE, { url: 'http://127.0.0.1:9/hooks', event_types: ['api_token.created'] });
  const id = created.json<{ id: string }>().id;
  const as = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    world.app.inject({ method, url, headers: { authorization: `Bearer ${world.b.jwt}` }, ...(payload ? { payload } : {}) });
  const attempts = [
    await as('GET', `${BASE}/${id}`),
    await as('PATCH', `${BASE}/${id}`, { enabled: false }),
    await as('DELETE', `${BASE}/${id}`),
    await as('POST', `${BASE}/${id}/rotate-secret`),
    await as('POST', `${BASE}/${id}/test`),
    await as('GET', `${BASE}/${id}/deliveries`),
    await as('POST', `${BASE}/${id}/deliveries/1/replay`),
    await as('POST', `${BASE}/${id}/replay`, { since: new Date(world.clock.now().getTime() - 60_000).toISOString() }),
  ];
  t.same(
    attempts.map((response) => response.statusCode),
    Array(attempts.length).fill(404),
  );
  t.equal((await as('GET', BASE)).json<{ data: unknown[] }>().data.length, 0, "B's list is empty");
  t.match((await world.get(world.a.jwt, `${BASE}/${id}`)).json(), { enabled: true }, 'unchanged');
  for (const bad of ['not-a-uuid', '00000000-0000-0000-0000-000000000000'])
    t.equal((await world.get(world.a.jwt, `${BASE}/${bad}`)).statusCode, 404, `${bad}: 404`);
  t.equal((await world.get(null, BASE)).statusCode, 401, 'no JWT: 401');
});

t.test('bad input is a 400 that changes nothing', async (t) => {
  const world = await createWorld(t, { WEBHOOK_DELIVERY: 'off', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' });
  const url = 'http://127.0.0.1:9/hooks';
  const bodies: Array<[unknown, string]> = [
    [{ url }, 'event_types'],
    [{ url, event_types: [] }, 'event_types'],
    [{ url, event_types: ['api_token.deleted'] }, 'event_types.0'],
    [{ url, event_types: ['api_token.created', 'api_token.created'] }, 'event_types'],
    [{ url, event_types: ['api_token.created'], cooling_unit_ids: [999_999] }, 'cooling_unit_ids'],
    [{ url, event_types: ['api_token.created'], description: 'x'.repeat(501) }, 'description'],
    [{ url, event_types: ['api_token.created'], secret: 'whsec_mine' }, ''],
    [{ url: 'x'.repeat(3000), event_types: ['api_token.created'] }, 'url'],
  ];
  for (const [body, field] of bodies) {
    const response = await world.post(world.a.jwt, BASE, body);
    t.equal(response.statusCode, 400, `${JSON.stringify(body).slice(0, 80)}: 400`);
    if (field) t.match(response.json(), { error: { code: 'invalid_request' } });
  }
  t.equal((await world.post(world.a.jwt, BASE, 'url=x', { 'content-type': 'application/x-www-form-urlencoded' })).statusCode, 415);
  const { rows } = await world.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_endpoints');
  t.equal(rows[0]!.n, 0, 'nothing registered');

  const created = await world.post(world.a.jwt, BASE, { url, event_types: ['api_token.created'] });
  const id = created.json<{ id: string }>().id;
  const patch = (payload: unknown) =>
    world.app.inject({
      method: 'PATCH',
      url: `${BASE}/${id}`,
      headers: { authorization: `Bearer ${world.a.jwt}` },
      payload: payload as object,
    });
  t.equal((await patch({})).statusCode, 400, 'an empty change');
  t.equal((await patch({ enabled: 'no' })).statusCode, 400);
  t.equal((await patch({ url: 'https://10.0.0.1/x' })).statusCode, 400, 'a private URL');
  t.equal((await world.post(world.a.jwt, `${BASE}/${id}/rotate-secret`, { grace_period_seconds: 604_801 })).statusCode, 400);
  t.equal(
    (await world.post(world.a.jwt, `${BASE}/${id}/replay`, { since: '2001-01-01T00:00:00Z' })).statusCode,
    400,
    'a replay too far back',
  );
  t.equal((await world.post(world.a.jwt, `${BASE}/${id}/deliveries/abc/replay`)).statusCode, 404);
  t.match((await world.get(world.a.jwt, `${BASE}/${id}`)).json(), { url, enabled: true }, 'unchanged');
});

t.test('the signing secret never reaches a log line', async (t) => {
  const world = await createWorld(t, { WEBHOOK_DELIVERY: 'off', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' });
  const created = await world.post(world.a.jwt, BASE, { url: 'http://127.0.0.1:9/hooks', event_types: ['api_token.created'] });
  const rotated = await world.post(world.a.jwt, `${BASE}/${created.json<{ id: string }>().id}/rotate-secret`);
  for (const secret of [created.json<{ secret: string }>().secret, rotated.json<{ secret: string }>().secret]) {
    const base64 = secret.slice('whsec_'.length);
    t.notOk(
      world.logs.some((line) => line.includes(base64)),
      'not in any log line',
    );
  }
  t.equal(created.headers['content-encoding'], undefined, 'an answer with a secret is never compressed');
});
