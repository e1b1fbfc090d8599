// DATABASE_READ_URL on a real streaming replica: a private PostgreSQL 15 primary and its hot
// standby (test/helpers/pg-replica.ts), the service as a 2-worker cluster on both. Replay on the
// replica is paused to make lag on demand:
//   - the data endpoints read the replica: rows written on the primary stay out of their answers
//     until replay resumes, then appear;
//   - what decides access reads the primary: a token created while the replica lags works at
//     once, a revoke takes effect at once on both workers, a unit added is usable at once;
//   - management reads the primary: a new token, a revocation show at once.
// Replica lag must never resurrect a revoked token or hide a new one.
import t, { type Test } from 'tap';
import { mintEmployeeJwt } from '../../src/auth/jwt.js';
import { Readable } from 'node:stream';
import { createPool } from '../../src/db/pool.js';
import { createChangeFeed } from '../../src/sensors/changes.js';
import { lineRuns, parseReadings, ReadingValidator } from '../../src/sensors/formats.js';
import { ingestReadings } from '../../src/sensors/ingest.js';
import { TEST_JWT_SECRET } from '../helpers/app.js';
import { migrateWithProfile } from '../helpers/db.js';
import { createCompany } from '../helpers/fixtures.js';
import { startPgReplicaPair } from '../helpers/pg-replica.js';
import { ALL_SCOPES } from '../helpers/tokens.js';
import { DATA_PATH, type Reply, send, startCluster, startRedis, statusCounts, until } from './harness.js';

const started = Date.now();
const pair = await startPgReplicaPair(t);
const database = await pair.createDatabase();
t.comment(
  `primary ${pair.primary.name} on ${pair.primary.port}, replica ${pair.replica.name} on ${pair.replica.port}: ${Date.now() - started} ms`,
);
// migrated here first (the service would migrate DATABASE_URL at start-up too: a no-op then)
await migrateWithProfile(database.primaryUrl, 'postgres');
const primary = createPool(database.primaryUrl, 3, { onError: () => {} });
t.teardown(() => primary.end());
const acme = await createCompany(primary, 'Acme');
const crop = (
  await primary.query<{ id: number }>(
    "INSERT INTO crops (name, emission_factor_without_cooling, emission_factor_with_cooling) VALUES ('Tomato', 1.2, 0.4) RETURNING id",
  )
).rows[0]!.id;
await pair.waitForReplay();

const redis = await startRedis(t);
const cluster = await startCluster(
  t,
  { DATABASE_URL: database.primaryUrl, DATABASE_READ_URL: database.replicaUrl, REDIS_URL: redis.url },
  { workers: 2 },
);
const base = cluster.baseUrl;
const jwt = { authorization: `Bearer ${await mintEmployeeJwt({ secret: TEST_JWT_SECRET, userId: acme.employeeId, ttlSeconds: 3600 })}` };

// replay must not stay paused past a failing test: the teardown drops the pair, but a later
// subtest would read a frozen replica
t.afterEach(() => pair.resumeReplay());

const countOnReplica = async (sql: string, params: unknown[]) =>
  Number((await pair.queryReplica<{ n: string }>(`SELECT count(*) AS n FROM (${sql}) AS found`, params, database.name))[0]!.n);

async function createToken(cooling_unit_ids: number[] = []) {
  const reply = await send(base, '/api/v1/api-tokens', {
    method: 'POST',
    headers: jwt,
    body: { name: 'replica test', scopes: ALL_SCOPES, cooling_unit_ids, expires_at: null },
  });
  if (reply.status !== 201) throw new Error(`token creation: ${reply.status} ${reply.body}`);
  const { id, token } = reply.json<{ id: string; token: string }>();
  return { id, headers: { authorization: `Bearer ${token}` } };
}

let tagCount = 0;
/** n requests of `path` at once, each on a fresh connection (both workers answer). */
async function requests(n: number, path: string, headers: Record<string, string>) {
  const tag = `replica-${tagCount++}`;
  const replies = await Promise.all(
    Array.from({ length: n }, (_, i) => send(base, path, { headers: { ...headers, 'x-request-id': `${tag}-${i}` }, timeoutMs: 8000 })),
  );
  const pids = await until(
    'the requests in the logs',
    () => {
      const found = replies.map((_, i) => cluster.pidOfRequest(`${tag}-${i}`));
      return found.every((pid) => pid !== undefined) && (found as number[]);
    },
    8000,
  );
  return { replies, workers: new Set(pids).size };
}

function allRefused(t: Test, replies: Reply[], what: string) {
  t.same(statusCounts(replies), { 401: replies.length }, `${what}: all ${replies.length} refused`);
}

const day = (offsetDays: number) => new Date(Date.now() - offsetDays * 86_400_000).toISOString().slice(0, 10);
const D = day(10);

async function get(path: string, headers: Record<string, string>) {
  const reply = await send(base, path, { headers, timeoutMs: 8000 });
  if (reply.status !== 200) throw new Error(`${path}: ${reply.status} ${reply.body}`);
  return reply.json<{ data: Array<Record<string, unknown>>; meta: { pagination: { total_count: number } } }>();
}

t.test('/readyz checks the replica too', async (t) => {
  const ready = await send(base, '/readyz');
  t.equal(ready.status, 200, ready.body);
  t.same(ready.json().checks, { database: 'ok', read_replica: 'ok', redis: 'ok' });
});

t.test('the data endpoints read the replica: rows written on the primary appear once replayed', async (t) => {
  const token = await createToken();
  const unit = acme.unitIds[0]!;
  const farmer = acme.farmerIds[0]!;
  const analytics = ['revenue', 'users', 'utilization'].map((name) => ({
    name,
    path: `/api/v1/analytics/${name}?start_date=${D}&end_date=${D}&cooling_unit_id=${unit}&page_size=10`,
  }));
  const before = new Map<string, unknown>();
  for (const { name, path } of analytics) before.set(name, await get(path, token.headers));

  await pair.pauseReplay();
  // a day's movements at the unit, and 4 sensor readings, committed on the primary
  const client = await primary.connect();
  try {
    await client.query('BEGIN');
    const checkIn = (
      await client.query<{ id: string }>(
        'INSERT INTO check_ins (cooling_unit_id, farmer_id, checked_in_at) VALUES ($1, $2, $3) RETURNING id',
        [unit, farmer, `${D}T08:00:00Z`],
      )
    ).rows[0]!.id;
    await client.query(
      'INSERT INTO crates (check_in_id, cooling_unit_id, crop_id, initial_weight_kg) VALUES ($1, $2, $3, 40), ($1, $2, $3, 35)',
      [checkIn, unit, crop],
    );
    await client.query(
      "INSERT INTO check_outs (cooling_unit_id, farmer_id, checked_out_at, currency, cooling_fees, paid) VALUES ($1, $2, $3, 'NGN', 250, true)",
      [unit, farmer, `${D}T16:00:00Z`],
    );
    await client.query(
      `INSERT INTO sensor_readings (cooling_unit_id, specification_type, recorded_at, value)
       SELECT $1, 'TEMPERATURE', $2::timestamptz + n * interval '15 minutes', 4 + n FROM generate_series(0, 3) AS n`,
      [unit, `${D}T09:00:00Z`],
    );
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  t.equal(
    await countOnReplica('SELECT 1 FROM check_outs WHERE cooling_unit_id = $1', [unit]),
    0,
    'the replica has not replayed them (lag)',
  );

  for (const { name, path } of analytics) {
    t.same(await get(path, token.headers), before.get(name), `${name}: the same answer as before the rows were written`);
  }
  const sensorPath = (from: string) => `/api/v1/sensor-data?cooling_unit_id=${unit}&start_date=${from}&end_date=${D}&page_size=100`;
  const lagging = await get(sensorPath(D), token.headers);
  t.equal(lagging.meta.pagination.total_count, 0, 'sensor-data: none of the new readings');

  await pair.resumeReplay();
  await pair.waitForReplay();
  const now = new Map<string, Awaited<ReturnType<typeof get>>>();
  for (const { name, path } of analytics) {
    now.set(name, await get(path, token.headers));
    t.notSame(now.get(name), before.get(name), `${name}: the answer changed once the replica replayed them`);
  }
  t.match(
    now.get('revenue')!.data[0],
    { cooling_unit_id: unit, check_outs: 1, currency_totals: [{ currency: 'NGN', total_revenue: 250 }] },
    'revenue: the check-out',
  );
  t.match(now.get('utilization')!.data[0], { cooling_unit_id: unit, check_ins: 1, crates_checked_in: 2 }, 'utilization: the check-in');
  // another window: sensor-data caches a window's counts for a few seconds
  const replayed = await get(sensorPath(day(11)), token.headers);
  t.equal(replayed.meta.pagination.total_count, 4, 'sensor-data: the 4 readings');
});

t.test('the change feed on the replica: cursors of either side work, and one read while it lags skips nothing', async (t) => {
  const token = await createToken();
  const unit = acme.unitIds[1]!;
  const changes = async (since: string) => {
    const reply = await send(base, `/api/v1/sensor-data/changes?since=${since}&cooling_unit_id=${unit}`, { headers: token.headers });
    if (reply.status !== 200) throw new Error(`changes: ${reply.status} ${reply.body}`);
    return reply.json<{ data: { from: string; new_readings: number }[]; meta: { pagination: { next_cursor: string } } }>();
  };
  const before = (await changes('now')).meta.pagination.next_cursor;
  // the same position read on the primary: one key for the whole deployment
  const fromPrimary = (await createChangeFeed(primary).page(acme.companyId, acme.unitIds, 'now', 1)).nextCursor;

  await pair.pauseReplay();
  const csv = `cooling_unit_id,specification_type,recorded_at,value\n${unit},HUMIDITY,${D}T07:30:00Z,88\n${unit},HUMIDITY,${D}T07:45:00Z,89\n`;
  const stats = await ingestReadings(primary, parseReadings(lineRuns(Readable.from([csv])), 'csv', new ReadingValidator(() => new Date())));
  t.equal(stats.inserted, 2, 'two late readings loaded on the primary');
  const lagging = await changes(before);
  t.same(lagging.data, [], 'the lagging replica shows no change yet');

  await pair.resumeReplay();
  await pair.waitForReplay();
  const expected = [{ from: `${D}T07:30:00Z`, new_readings: 2 }];
  for (const [what, cursor] of [
    ['a cursor from before', before],
    ['the cursor the lagging replica gave', lagging.meta.pagination.next_cursor],
    ['a cursor made on the primary', fromPrimary],
  ] as const) {
    t.match((await changes(cursor)).data, expected, `${what}: the change, once replayed`);
  }
});

t.test('while the replica lags: tokens, revocation, units and management use the primary', async (t) => {
  const warm = await createToken();
  const warmed = await requests(12, DATA_PATH, warm.headers);
  t.same(statusCounts(warmed.replies), { 200: 12 }, 'a token in use');
  t.equal(warmed.workers, 2, 'cached by both workers');

  await pair.pauseReplay();
  const fresh = await createToken();
  t.equal(await countOnReplica('SELECT 1 FROM api_tokens WHERE id = $1', [fresh.id]), 0, 'a token created now is not on the replica yet');
  const used = await requests(12, DATA_PATH, fresh.headers);
  t.same(statusCounts(used.replies), { 200: 12 }, 'and works at once');
  t.equal(used.workers, 2, 'on both workers');
  const shown = await send(base, `/api/v1/api-tokens/${fresh.id}`, { headers: jwt });
  t.equal(shown.status, 200, 'management shows it at once');
  const listed = await send(base, '/api/v1/api-tokens?page_size=100', { headers: jwt });
  t.ok(
    listed.json<{ data: Array<{ id: string }> }>().data.some((token) => token.id === fresh.id),
    'and lists it',
  );

  const revoked = await send(base, `/api/v1/api-tokens/${warm.id}/revoke`, { method: 'POST', headers: jwt, timeoutMs: 8000 });
  t.equal(revoked.status, 200, 'a revoke while the replica lags');
  t.equal(
    await countOnReplica('SELECT 1 FROM api_tokens WHERE id = $1 AND revoked_at IS NULL', [warm.id]),
    1,
    'the replica still has it live',
  );
  const after = await requests(20, DATA_PATH, warm.headers);
  allRefused(t, after.replies, 'the revoked token, at once');
  t.equal(after.workers, 2, 'on both workers');
  t.equal(
    (await send(base, `/api/v1/api-tokens/${warm.id}`, { headers: jwt })).json<{ revoked: boolean }>().revoked,
    true,
    'management shows it revoked',
  );

  // a unit added on the primary: a token may be restricted to it and read it at once (its data,
  // from the replica, is empty until replayed; never an error)
  const unit = (
    await primary.query<{ id: number }>(
      `INSERT INTO cooling_units (location_id, company_id, name, capacity_crates, capacity_kg) VALUES ($1, $2, 'Acme unit new', 100, 2500) RETURNING id`,
      [acme.locationId, acme.companyId],
    )
  ).rows[0]!.id;
  // units reach the access layer through LISTEN/NOTIFY on the primary: give it a moment
  const restricted = await until(
    'a token restricted to the new unit',
    async () => {
      const reply = await send(base, '/api/v1/api-tokens', {
        method: 'POST',
        headers: jwt,
        body: { name: 'new unit', scopes: ALL_SCOPES, cooling_unit_ids: [unit], expires_at: null },
      });
      return reply.status === 201 ? reply.json<{ token: string }>() : undefined;
    },
    5000,
    100,
  );
  const unitHeaders = { authorization: `Bearer ${restricted.token}` };
  const paths = ['utilization', 'revenue', 'users', 'impact'].map(
    (name) => `/api/v1/analytics/${name}?start_date=${D}&end_date=${D}&page_size=10`,
  );
  paths.push(`/api/v1/sensor-data?start_date=${D}&end_date=${D}&page_size=10`);
  for (const path of paths) {
    for (const query of ['', `&cooling_unit_id=${unit}`]) {
      const reply = await send(base, path + query, { headers: unitHeaders, timeoutMs: 8000 });
      t.equal(
        reply.status,
        200,
        `${path.split('?')[0]}${query ? ' (cooling_unit_id = the new unit)' : ''}: ${reply.status === 200 ? 'answered' : reply.body}`,
      );
    }
  }
  await pair.resumeReplay();
  await pair.waitForReplay();
  allRefused(t, (await requests(8, DATA_PATH, warm.headers)).replies, 'the revoked token, once the replica caught up');
  t.same(statusCounts((await requests(8, DATA_PATH, fresh.headers)).replies), { 200: 8 }, 'the new token, once the replica caught up');
});
