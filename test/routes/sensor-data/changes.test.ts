// GET /api/v1/sensor-data/changes in both storage profiles (test/helpers/sensor-world.ts): late
// readings loaded through the ingest appear as spans, exactly once, in the order they landed;
// duplicates add nothing; a token sees only its company's readable units; a cursor survives a
// restart (another app on the same database) and is refused when forged (400), another company's
// (400) or older than what the feed keeps (410).
import t from 'tap';
import type { Test } from 'tap';
import { createTestApp } from '../../helpers/app.js';
import { CSV_HEADER, createSensorWorld, eachProfile, type SensorWorld } from '../../helpers/sensor-world.js';
import { issueToken } from '../../helpers/tokens.js';
import { pruneChanges } from '../../../src/sensors/changes.js';

interface Change {
  cooling_unit_id: number;
  specification_type: string;
  from: string;
  to: string;
  new_readings: number;
  landed_at: string;
}
interface ChangesBody {
  data: Change[];
  meta: { company_id: number; filters: Record<string, unknown>; pagination: { page_size: number; has_next: boolean; next_cursor: string } };
  error?: { code: string; message: string; details?: { field?: string } };
}

function changesOf(world: SensorWorld, app = world.ctx.app) {
  return async (query: string, headers = world.all.headers) => {
    const response = await app.inject({ method: 'GET', url: `/api/v1/sensor-data/changes?${query}`, headers });
    return { status: response.statusCode, body: response.json() as ChangesBody };
  };
}

/** Every change after `since` ('': from the oldest kept), page by page (page_size 1 by default: the cursor carries it all). */
async function allChanges(get: ReturnType<typeof changesOf>, since: string, pageSize = 1, headers?: Record<string, string>) {
  const changes: Change[] = [];
  let cursor = since;
  for (let pages = 0; pages < 100; pages++) {
    const page = await get(`${cursor ? `since=${cursor}&` : ''}page_size=${pageSize}`, headers);
    if (page.status !== 200) throw new Error(`${page.status} ${JSON.stringify(page.body)}`);
    changes.push(...page.body.data);
    cursor = page.body.meta.pagination.next_cursor;
    if (!page.body.meta.pagination.has_next) return { changes, cursor };
  }
  throw new Error('the feed did not end');
}

const spanOf = (change: Change) => [change.cooling_unit_id, change.specification_type, change.from, change.to, change.new_readings];

eachProfile(t, async (t: Test, profile) => {
  const world = await createSensorWorld(t, profile);
  const { a, b, a1, a2, a3, ctx } = world;
  const get = changesOf(world);

  const start = await get('since=now');
  t.same([start.status, start.body.data], [200, []], 'since=now: no changes, only a cursor');
  const before = start.body.meta.pagination.next_cursor;
  t.match(before, /^[A-Za-z0-9_-]{34}$/, 'an opaque cursor');

  await t.test('the loads that built the history are in the feed from its start', async (t) => {
    const { changes } = await allChanges(get, '', 1000);
    const units = new Set(changes.map((change) => change.cooling_unit_id));
    t.same([...units].sort(), [a1, a2, a3].sort(), "A's three units");
    const readings = changes.reduce((sum, change) => sum + change.new_readings, 0);
    t.equal(
      readings,
      Number((await world.one<{ n: string }>('SELECT count(*) AS n FROM sensor_readings')).n),
      'every reading counted once',
    );
  });

  // late readings in three old hours of two units, and a reading re-sent as it was
  const existing = await world.one<{ at: string; value: number }>(
    `SELECT sensor_timestamp_text(recorded_at) AS at, value FROM sensor_readings
     WHERE cooling_unit_id = $1 AND specification_type = 'TEMPERATURE' ORDER BY recorded_at LIMIT 1 OFFSET 50`,
    [a3],
  );
  const late = [
    `${a1},TEMPERATURE,2026-03-06T10:07:00Z,4.5`,
    `${a1},TEMPERATURE,2026-03-09T02:07:30.25Z,4.6`,
    `${a2},HUMIDITY,2026-03-07T23:59:00Z,61`,
    `${a3},TEMPERATURE,${existing.at},${existing.value}`,
  ];
  const stats = await world.load([CSV_HEADER, ...late].join('\n') + '\n');
  t.same([stats.inserted, stats.duplicates], [3, 1], 'three late readings stored, the re-sent one dropped');

  await t.test('late readings into old hours appear as their spans, once; the duplicate adds nothing', async (t) => {
    const { changes, cursor } = await allChanges(get, before);
    t.same(
      changes.map(spanOf).sort(),
      [
        [a1, 'TEMPERATURE', '2026-03-06T10:07:00Z', '2026-03-06T10:07:00Z', 1],
        [a1, 'TEMPERATURE', '2026-03-09T02:07:30.250000Z', '2026-03-09T02:07:30.250000Z', 1],
        [a2, 'HUMIDITY', '2026-03-07T23:59:00Z', '2026-03-07T23:59:00Z', 1],
      ].sort(),
      'one span per old hour; nothing for the re-sent reading',
    );
    t.ok(
      changes.every((change) => /^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(change.landed_at)),
      'landed_at is an instant',
    );
    const after = await get(`since=${cursor}`);
    t.same([after.status, after.body.data, after.body.meta.pagination.has_next], [200, [], false], 'nothing after the last cursor');
  });

  await t.test('a token sees only the units it may read; another company sees none', async (t) => {
    const narrow = await issueToken(ctx, a.employeeId, { scopes: ['sensor_data'], cooling_unit_ids: [a2] });
    const { changes } = await allChanges(get, (await get('since=now', narrow.headers)).body.meta.pagination.next_cursor, 1, narrow.headers);
    t.same(changes, [], 'nothing landed since its own cursor');
    const mine = await get('page_size=1000', narrow.headers);
    t.ok(mine.body.data.length > 0 && mine.body.data.every((change) => change.cooling_unit_id === a2), `only ${a2}`);
    const filtered = await get(`since=${before}&cooling_unit_id=${a1}`);
    t.same(
      filtered.body.data.map((change) => change.cooling_unit_id),
      [a1, a1],
      'cooling_unit_id filters',
    );
    t.equal((await get(`cooling_unit_id=${a1}`, narrow.headers)).status, 404, 'a unit the token may not read: 404');
    t.equal((await get(`cooling_unit_id=${b.unitIds[0]}`)).status, 404, "another company's unit: 404");

    const other = await issueToken(ctx, b.employeeId, { scopes: ['sensor_data'] });
    const theirs = await get('page_size=1000', other.headers);
    t.same([theirs.status, theirs.body.data, theirs.body.meta.company_id], [200, [], b.companyId], 'company B sees none of A');
    const stolen = await get(`since=${before}`, other.headers);
    t.same([stolen.status, stolen.body.error?.code], [400, 'invalid_cursor'], "A's cursor is not B's");
    t.equal((await get('', (await issueToken(ctx, a.employeeId, { scopes: ['utilization'] })).headers)).status, 403, 'scope');
    t.equal((await get('', {})).status, 401, 'token required');
  });

  await t.test('forged and garbled cursors are 400 invalid_cursor', async (t) => {
    const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    for (const since of [flip(before, 5), flip(before, 30), 'abc', before + 'A', before.slice(0, -1), '%00', 'x'.repeat(101), 'NOW']) {
      const answer = await get(`since=${encodeURIComponent(since)}`);
      t.same([answer.status, answer.body.error?.code, answer.body.error?.details?.field], [400, 'invalid_cursor', 'since'], since);
    }
    const twice = await get(`since=${before}&since=${before}`);
    t.equal(twice.status, 400, 'since given twice: 400');
    t.same((await get('since=')).body.error?.code, 'invalid_cursor', 'since given empty: 400');
  });

  await t.test('a cursor outlives the process: another app on the same database takes it', async (t) => {
    const restarted = await createTestApp(t, {}, { database: world.db });
    const again = changesOf(world, restarted.app);
    const { changes } = await allChanges(again, before, 2);
    t.equal(changes.length, 3, 'the same three spans, from the cursor the first process gave');
  });

  await t.test('pruned changes: an older cursor is 410 cursor_expired; since=now starts again', async (t) => {
    const head = (await get('since=now')).body.meta.pagination.next_cursor;
    // everything landed before a minute from now (the database's clock) is past the window
    t.ok((await pruneChanges(world.db.pool, new Date(Date.now() + 60_000))) > 0, 'pruned');
    const expired = await get(`since=${before}`);
    t.same([expired.status, expired.body.error?.code], [410, 'cursor_expired'], 'a cursor from before the pruned changes');
    t.match(expired.body.error?.message, /export/, 'the message says to export again');
    const current = await get(`since=${head}`);
    t.same([current.status, current.body.data], [200, []], 'a cursor at the head still works');
    const fresh = await get('');
    t.same([fresh.status, fresh.body.data], [200, []], 'no since: from the oldest change kept (none)');
    await world.load(`${CSV_HEADER}\n${a1},HUMIDITY,2026-03-05T05:05:00Z,70\n`);
    const next = await get(`since=${head}`);
    t.same(next.body.data.map(spanOf), [[a1, 'HUMIDITY', '2026-03-05T05:05:00Z', '2026-03-05T05:05:00Z', 1]], 'and sees what lands next');
  });
});
