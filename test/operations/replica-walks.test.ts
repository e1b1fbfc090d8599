// A walk of GET /api/v1/sensor-data by cursor whose pages go alternately to an instance reading the
// primary and one reading a streaming replica that lags (replay paused: test/helpers/pg-replica.ts),
// after late readings landed on the primary: no record missed or repeated. A page the lagging
// replica has not replayed the walk's first page for is read on the primary (src/sensors/history.ts).
import { Readable } from 'node:stream';
import t from 'tap';
import { mintEmployeeJwt } from '../../src/auth/jwt.js';
import { createPool } from '../../src/db/pool.js';
import { lineRuns, parseReadings, ReadingValidator } from '../../src/sensors/formats.js';
import { ingestReadings } from '../../src/sensors/ingest.js';
import { TEST_JWT_SECRET } from '../helpers/app.js';
import { migrateWithProfile } from '../helpers/db.js';
import { createCompany } from '../helpers/fixtures.js';
import { startPgReplicaPair } from '../helpers/pg-replica.js';
import { ALL_SCOPES } from '../helpers/tokens.js';
import { type Cluster, send, startCluster } from './harness.js';

const pair = await startPgReplicaPair(t);
const database = await pair.createDatabase();
await migrateWithProfile(database.primaryUrl, 'postgres');
const primary = createPool(database.primaryUrl, 3, { onError: () => {} });
t.teardown(() => primary.end());
const acme = await createCompany(primary, 'Acme');
const unit = acme.unitIds[0]!;
const D = new Date(Date.now() - 10 * 86_400_000).toISOString().slice(0, 10);

const load = async (minutes: number[]) => {
  const lines = minutes.map((m) => `${unit},TEMPERATURE,${new Date(Date.parse(`${D}T00:00:00Z`) + m * 60_000).toISOString()},${m % 7}`);
  const csv = `cooling_unit_id,specification_type,recorded_at,value\n${lines.join('\n')}\n`;
  return ingestReadings(primary, parseReadings(lineRuns(Readable.from([csv])), 'csv', new ReadingValidator(() => new Date())));
};
// every 10 minutes of the day: 144 readings
await load(Array.from({ length: 144 }, (_, i) => i * 10));
await pair.waitForReplay();

// one worker each: no Redis needed
const onPrimary = await startCluster(t, { DATABASE_URL: database.primaryUrl }, { workers: 1 });
const onReplica = await startCluster(t, { DATABASE_URL: database.primaryUrl, DATABASE_READ_URL: database.replicaUrl }, { workers: 1 });
const jwt = { authorization: `Bearer ${await mintEmployeeJwt({ secret: TEST_JWT_SECRET, userId: acme.employeeId, ttlSeconds: 3600 })}` };
const created = await send(onPrimary.baseUrl, '/api/v1/api-tokens', {
  method: 'POST',
  headers: jwt,
  body: { name: 'walks', scopes: ALL_SCOPES, cooling_unit_ids: [], expires_at: null },
});
const headers = { authorization: `Bearer ${created.json<{ token: string }>().token}` };
t.afterEach(() => pair.resumeReplay());

interface Page {
  data: { timestamp: string }[];
  meta: { pagination: { next_cursor: string | null; has_next: boolean } };
}
async function page(on: Cluster, cursor: string | null): Promise<Page> {
  const path = `/api/v1/sensor-data?cooling_unit_id=${unit}&start_date=${D}&end_date=${D}&page_size=40${cursor ? `&cursor=${cursor}` : ''}`;
  const reply = await send(on.baseUrl, path, { headers, timeoutMs: 8000 });
  if (reply.status !== 200) throw new Error(`${path}: ${reply.status} ${reply.body}`);
  return reply.json<Page>();
}

t.test('pages alternate between the primary and a lagging replica: every reading once', async (t) => {
  await pair.pauseReplay();
  // 60 late readings between the others, committed on the primary before the walk: not on the replica
  const late = await load(Array.from({ length: 60 }, (_, i) => i * 20 + 5));
  t.equal(late.inserted, 60);
  const onReplicaNow = await page(onReplica, null);
  t.equal(onReplicaNow.data.length, 40, 'the replica answers');
  const replicaCount = await pair.queryReplica<{ n: string }>(
    'SELECT count(*) AS n FROM sensor_readings WHERE cooling_unit_id = $1',
    [unit],
    database.name,
  );
  t.equal(Number(replicaCount[0]!.n), 144, 'the replica has not replayed the late readings');

  const seen: string[] = [];
  let cursor: string | null = null;
  for (let i = 0; ; i++) {
    // the walk starts on the primary, then every other page is the lagging replica's instance
    const answer = await page(i % 2 === 0 ? onPrimary : onReplica, cursor);
    seen.push(...answer.data.map((record) => record.timestamp));
    cursor = answer.meta.pagination.next_cursor;
    if (!cursor) break;
  }
  t.equal(seen.length, 204, 'all 204 readings stored before the walk');
  t.equal(new Set(seen).size, seen.length, 'none twice');
  t.same(
    seen,
    [...seen].sort((a, b) => a.localeCompare(b)),
    'in order',
  );
});

t.test('a walk whose first page a lagging replica reads, with since=now read on the primary before it', async (t) => {
  await pair.waitForReplay();
  await pair.pauseReplay();
  // late readings early in the day (within the first page), committed before since=now and the walk
  const late = await load([1, 2, 3]);
  t.equal(late.inserted, 3);
  const since = await send(onPrimary.baseUrl, `/api/v1/sensor-data/changes?since=now&cooling_unit_id=${unit}`, { headers });
  const cursorBefore = since.json<{ meta: { pagination: { next_cursor: string } } }>().meta.pagination.next_cursor;
  const seen = new Set<string>();
  let cursor: string | null = null;
  for (let i = 0; ; i++) {
    const answer = await page(i === 0 ? onReplica : onPrimary, cursor);
    for (const record of answer.data) seen.add(record.timestamp);
    cursor = answer.meta.pagination.next_cursor;
    if (!cursor) break;
  }
  await pair.resumeReplay();
  await pair.waitForReplay();
  const feed = await send(onPrimary.baseUrl, `/api/v1/sensor-data/changes?since=${cursorBefore}&cooling_unit_id=${unit}`, { headers });
  const spans = feed.json<{ data: { from: string; to: string }[] }>().data;
  const missing = [1, 2, 3]
    .map((m) => new Date(Date.parse(`${D}T00:00:00Z`) + m * 60_000).toISOString().replace('.000Z', 'Z'))
    .filter((at) => !seen.has(at) && !spans.some((span) => span.from <= at && at <= span.to));
  t.same(missing, [], 'every late reading is in the walk or in the feed after since=now', {
    todo:
      'since=now read on the primary is ahead of a lagging replica that answers the first page: ' +
      'readings landed before both but not replayed are in neither (report of issue 41)',
  });
});
