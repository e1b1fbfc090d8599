// A walk of GET /api/v1/sensor-data by cursor whose pages go alternately to an instance reading the
// primary and one reading a streaming replica that lags (replay paused: test/helpers/pg-replica.ts),
// after late readings landed on the primary: no record missed or repeated. A page the lagging
// replica has not replayed the walk's first page for is read on the primary (src/sensors/history.ts),
// and so is a first page or a bulk slice it has not replayed the primary's feed head for, as read
// when the request arrived: with since=now taken before, every late reading is in the walk (or
// slice) or in the feed after it (src/routes/sensor-data/history.ts, bulk.ts).
import { Readable } from 'node:stream';
import t from 'tap';
import { lineRuns, parseReadings, ReadingValidator } from '../../src/sensors/formats.js';
import { ingestReadings } from '../../src/sensors/ingest.js';
import { replicatedDatabaseWithCompany, startPgReplicaPair } from '../helpers/pg-replica.js';
import { bearerOfNewToken, type Cluster, send, startCluster } from './harness.js';

const pair = await startPgReplicaPair(t);
const { database, primary, acme } = await replicatedDatabaseWithCompany(t, pair);
const unit = acme.unitIds[0]!;
const D = new Date(Date.now() - 10 * 86_400_000).toISOString().slice(0, 10);

const at = (minute: number, day = D) => new Date(Date.parse(`${day}T00:00:00Z`) + minute * 60_000).toISOString().replace('.000Z', 'Z');
const load = async (minutes: number[], day = D) => {
  const lines = minutes.map((m) => `${unit},TEMPERATURE,${at(m, day)},${m % 7}`);
  const csv = `cooling_unit_id,specification_type,recorded_at,value\n${lines.join('\n')}\n`;
  return ingestReadings(primary, parseReadings(lineRuns(Readable.from([csv])), 'csv', new ReadingValidator(() => new Date())));
};
// every 10 minutes of the day: 144 readings
await load(Array.from({ length: 144 }, (_, i) => i * 10));
await pair.waitForReplay();

// one worker each: no Redis needed
const onPrimary = await startCluster(t, { DATABASE_URL: database.primaryUrl }, { workers: 1 });
const onReplica = await startCluster(t, { DATABASE_URL: database.primaryUrl, DATABASE_READ_URL: database.replicaUrl }, { workers: 1 });
const headers = await bearerOfNewToken(onPrimary.baseUrl, acme.employeeId, 'walks');
t.afterEach(() => pair.resumeReplay());

interface Page {
  data: { timestamp: string }[];
  meta: { pagination: { next_cursor: string | null; has_next: boolean } };
}
async function page(on: Cluster, cursor: string | null, startDate = D): Promise<Page> {
  const path =
    `/api/v1/sensor-data?cooling_unit_id=${unit}&start_date=${startDate}&end_date=${D}&page_size=40` + (cursor ? `&cursor=${cursor}` : '');
  const reply = await send(on.baseUrl, path, { headers, timeoutMs: 8000 });
  if (reply.status !== 200) throw new Error(`${path}: ${reply.status} ${reply.body}`);
  return reply.json<Page>();
}

interface Span {
  from: string;
  to: string;
}
const inSpans = (spans: Span[], instant: string) => spans.some((span) => span.from <= instant && instant <= span.to);
/** The feed's cursor now, read on the primary's instance. */
async function sinceNow(): Promise<string> {
  const reply = await send(onPrimary.baseUrl, `/api/v1/sensor-data/changes?since=now&cooling_unit_id=${unit}`, { headers });
  return reply.json<{ meta: { pagination: { next_cursor: string } } }>().meta.pagination.next_cursor;
}
/** The feed after `cursor` once the replica caught up. */
async function spansAfter(cursor: string): Promise<Span[]> {
  await pair.resumeReplay();
  await pair.waitForReplay();
  const feed = await send(onPrimary.baseUrl, `/api/v1/sensor-data/changes?since=${cursor}&cooling_unit_id=${unit}`, { headers });
  return feed.json<{ data: Span[] }>().data;
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
  const cursorBefore = await sinceNow();
  const seen = new Set<string>();
  let cursor: string | null = null;
  for (let i = 0; ; i++) {
    const answer = await page(i === 0 ? onReplica : onPrimary, cursor);
    for (const record of answer.data) seen.add(record.timestamp);
    cursor = answer.meta.pagination.next_cursor;
    if (!cursor) break;
  }
  const spans = await spansAfter(cursorBefore);
  const missing = [1, 2, 3].map((m) => at(m)).filter((instant) => !seen.has(instant) && !inSpans(spans, instant));
  t.same(missing, [], 'every late reading is in the walk or in the feed after since=now');
});

t.test('a first page on a lagging replica whose counts start after late readings of an earlier day', async (t) => {
  await pair.waitForReplay();
  await pair.pauseReplay();
  // the day before: the replica counts nothing there, its first counted record is D's first
  const before = new Date(Date.parse(`${D}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
  t.equal((await load([30, 90], before)).inserted, 2);
  const cursorBefore = await sinceNow();
  const first = await page(onReplica, null, before);
  const seen = new Set(first.data.map((record) => record.timestamp));
  const spans = await spansAfter(cursorBefore);
  const missing = [at(30, before), at(90, before)].filter((instant) => !seen.has(instant) && !inSpans(spans, instant));
  t.same(missing, [], 'the readings before the first counted day are in the first page or in the feed');
  t.equal(first.data[0]?.timestamp, at(30, before), 'the first page starts with the earliest reading');
});

t.test('a bulk slice from a lagging replica, with since=now read on the primary before it', async (t) => {
  await pair.waitForReplay();
  await pair.pauseReplay();
  t.equal((await load([4, 6])).inserted, 2);
  const cursorBefore = await sinceNow();
  const slice = await send(onReplica.baseUrl, `/api/v1/sensor-data/bulk?cooling_unit_id=${unit}&start_date=${D}&end_date=${D}&format=csv`, {
    headers,
    timeoutMs: 8000,
  });
  t.equal(slice.status, 200);
  const instants = new Set(
    slice.body
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.split(',')[0]!),
  );
  t.equal(instants.size, 144 + 60 + 3 + 2, 'every reading of the day, once');
  const spans = await spansAfter(cursorBefore);
  const missing = [at(4), at(6)].filter((instant) => !instants.has(instant) && !inSpans(spans, instant));
  t.same(missing, [], 'the late readings are in the slice or in the feed after since=now');
});
