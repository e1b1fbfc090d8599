// The typed client against the real service (real HTTP on a loopback port, real PostgreSQL): every
// data endpoint answers its typed envelope; paginate() yields every record of a query exactly once,
// page after page; the token management (create, list, retrieve, rotate, revoke), its audit trail
// and the signed-in employee with an employee's JWT; answers come compressed (brotli) and are decoded by fetch.
import t from 'tap';
import { ColdtrackClient, type ClientEvent, type SensorRecord, type UtilizationRecord } from '@coldtrack/client';
import { createExportWorld, databaseHourly, canonicalLine } from './world.js';
import { createHash } from 'node:crypto';

const world = await createExportWorld(t);
const [unit] = world.unitIds as [number];

t.test('every data endpoint: one typed page', async (t) => {
  const token = (await world.issue({ scopes: ['users', 'utilization', 'revenue', 'impact', 'sensor_data'] })).token;
  const client = new ColdtrackClient({ baseUrl: world.baseUrl, token });
  const window = { start_date: '2025-03-01', end_date: '2025-03-31' };
  const users = await client.users({ ...window, period: 'week' });
  t.equal(users.meta.filters.period, 'week');
  t.ok(
    users.data.every((record) => typeof record.registered_users === 'number'),
    'users: records with registered_users',
  );
  const utilization = await client.utilization({ ...window, cooling_unit_id: unit });
  t.equal(utilization.meta.pagination.total_count, 31, 'utilization: one record per day for the unit');
  const record: UtilizationRecord = utilization.data[0]!;
  t.equal(record.cooling_unit_id, unit);
  const revenue = await client.revenue({ ...window, payment_status: 'paid' });
  t.equal(revenue.meta.filters.payment_status, 'paid');
  t.ok(
    revenue.data.every((r) => Array.isArray(r.currency_totals)),
    'revenue: currency_totals',
  );
  const impact = await client.impact({ ...window, location_id: world.a.locationId, period: 'month' });
  t.equal(impact.meta.filters.location_id, world.a.locationId);
  const sensor = await client.sensorData({ ...window, cooling_unit_id: unit, aggregation: 'daily', specification_type: ['TEMPERATURE'] });
  t.equal(sensor.meta.pagination.total_count, 31);
  const reading: SensorRecord = sensor.data[0]!;
  t.match(reading, { cooling_unit_id: unit, specification_type: 'TEMPERATURE', sample_count: 96 });
});

t.test('paginate(): every record of a query once, page after page, 1,000 a page by default', async (t) => {
  const events: ClientEvent[] = [];
  const client = new ColdtrackClient({ baseUrl: world.baseUrl, token: world.token, onEvent: (event) => events.push(event) });
  const hash = createHash('sha256');
  let count = 0;
  for await (const record of client.paginate('sensorData', {
    cooling_unit_id: unit,
    start_date: '2025-01-01',
    end_date: '2025-12-31',
    aggregation: 'hourly',
  })) {
    hash.update(`${canonicalLine(record)}\n`);
    count++;
  }
  t.same(
    { count, checksum: hash.digest('hex') },
    await databaseHourly(world.db, unit),
    "17,520 hourly records, the database's rows exactly",
  );
  const responses = events.filter((event): event is Extract<ClientEvent, { type: 'response' }> => event.type === 'response');
  t.equal(responses.length, 18, '18 pages of 1,000');
  t.ok(
    responses.every((event) => event.status === 200 && event.rateLimit?.limit !== undefined),
    'each with its rate-limit headers',
  );

  const pages = [];
  for await (const page of client.pages('utilization', { start_date: '2025-01-01', end_date: '2025-01-10', page_size: 7 }))
    pages.push(page.meta.pagination.page);
  t.same(pages, [1, 2, 3, 4, 5, 6], 'pages(): 40 records (10 days x 4 units) in pages of 7');
  const fromPage = [];
  for await (const page of client.pages('utilization', { start_date: '2025-01-01', end_date: '2025-01-10', page_size: 7, page: 5 }))
    fromPage.push(page.meta.pagination.page);
  t.same(fromPage, [5, 6], 'from a given page');
});

t.test('answers come compressed: fetch asked for br and decoded it', async (t) => {
  const seen: string[] = [];
  const recording = (async (input: URL | string, init?: RequestInit) => {
    const response = await fetch(input, init);
    seen.push(`${(init?.headers as Record<string, string>)['accept-encoding']} -> ${response.headers.get('content-encoding')}`);
    return response;
  }) as typeof fetch;
  const client = new ColdtrackClient({ baseUrl: world.baseUrl, token: world.token, fetch: recording });
  const page = await client.sensorData({
    cooling_unit_id: unit,
    start_date: '2025-01-01',
    end_date: '2025-01-31',
    aggregation: 'hourly',
    page_size: 1000,
  });
  t.equal(page.data.length, 1000);
  t.same(seen, ['br, gzip -> br']);
});

t.test('token management with an employee JWT: create, list, retrieve, rotate, revoke', async (t) => {
  const admin = new ColdtrackClient({ baseUrl: world.baseUrl, token: await world.ctx.jwtFor(world.a.employeeId) });
  const created = await admin.tokens.create({
    name: 'Partner ERP',
    scopes: ['sensor_data'],
    cooling_unit_ids: [unit],
    expires_at: '2030-01-01T00:00:00Z',
  });
  t.match(created, { name: 'Partner ERP', scopes: ['sensor_data'], cooling_unit_ids: [unit], revoked: false, token: /^ctk_/ });
  const partner = new ColdtrackClient({ baseUrl: world.baseUrl, token: created.token });
  t.equal(
    (await partner.sensorData({ start_date: '2025-01-01', end_date: '2025-01-01', aggregation: 'daily' })).meta.pagination.total_count,
    2,
    'the new token reads its one unit',
  );

  const retrieved = await admin.tokens.retrieve(created.id);
  t.equal(retrieved.id, created.id);
  t.notOk('token' in retrieved, 'no raw token in retrieve');
  const listed = await admin.tokens.list({ state: 'active', page_size: 100 });
  t.ok(
    listed.data.some((token) => token.id === created.id),
    'listed as active',
  );
  const all = [];
  for await (const token of admin.paginate('tokens', { page_size: 2 })) all.push(token.id);
  t.equal(all.length, listed.meta.pagination.total_count, `paginate('tokens'): every token (${all.length})`);

  const rotated = await admin.tokens.rotate(created.id, { grace_period_seconds: 0 });
  t.match(rotated, { name: 'Partner ERP', scopes: ['sensor_data'], cooling_unit_ids: [unit], token: /^ctk_/ });
  t.not(rotated.token, created.token);
  const successor = new ColdtrackClient({ baseUrl: world.baseUrl, token: rotated.token });
  t.equal(
    (await successor.sensorData({ start_date: '2025-01-01', end_date: '2025-01-01', aggregation: 'daily' })).data.length,
    2,
    'the replacement works',
  );
  await t.rejects(partner.sensorData(), { status: 401, code: 'unauthorized' }, 'the rotated token stops (grace period 0)');

  const revoked = await admin.tokens.revoke(rotated.id);
  t.match(revoked, { id: rotated.id, revoked: true });
  await t.rejects(successor.sensorData(), { name: 'ColdtrackApiError', status: 401 }, 'the revoked token is refused');

  // the audit trail of the same calls, and who the JWT names
  const history = await admin.auditEvents.list({ token_id: rotated.id });
  t.strictSame(
    history.data.map((event) => [event.action, event.actor.id]),
    [
      ['token.revoked', String(world.a.employeeId)],
      ['token.rotated', String(world.a.employeeId)],
    ],
    "the replacement's history, newest first",
  );
  const walked = [];
  for await (const event of admin.paginate('auditEvents', { page_size: 1, action: 'token.created' })) walked.push(event.token_id);
  t.ok(walked.includes(created.id), `paginate('auditEvents'): every creation (${walked.length})`);
  t.match(await admin.me(), { user_id: world.a.employeeId, company_id: world.a.companyId });
});
