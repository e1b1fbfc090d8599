// GET /api/v1/sensor-data walked by cursor (next_cursor, then ?cursor=), in both storage profiles
// (test/helpers/sensor-world.ts): every record once and in order at any page size; readings that
// land during a walk never make it miss or repeat a record stored before it began, and those it
// passed by are in the change feed after a cursor taken before the walk; has_next is true exactly
// when a record follows, also while the counts lag; a cursor keeps its walk's window and filters,
// and is refused (400) when edited, another company's or beside a page number.
import t from 'tap';
import { CSV_HEADER, createSensorWorld, eachProfile, type PageResponse, type SensorWorld } from '../../helpers/sensor-world.js';
import { issueToken } from '../../helpers/tokens.js';
import { DAY_MS } from '../../../src/time.js';

const keyOf = (r: Record<string, unknown>) => `${r.timestamp}/${r.cooling_unit_id}/${r.specification_type}`;

/** Every page of a query, by cursor from its first page. */
async function walk(world: SensorWorld, query: string, between?: (page: number) => Promise<void>) {
  const pages: PageResponse[] = [];
  let cursor: string | null = null;
  for (let page = 1; page < 10_000; page++) {
    const { status, body } = await world.get(cursor ? `${query}&cursor=${cursor}` : query);
    if (status !== 200) throw new Error(`page ${page}: ${status} ${JSON.stringify(body)}`);
    pages.push(body);
    cursor = body.meta.pagination.next_cursor as string | null;
    if (!body.meta.pagination.has_next) return { pages, cursor };
    await between?.(page);
  }
  throw new Error('the walk did not end');
}

async function storedKeys(world: SensorWorld, relation: string, time: string, where = 'true'): Promise<string[]> {
  const { rows } = await world.db.pool.query<{ key: string }>(`
    SELECT sensor_timestamp_text(${time}) || '/' || cooling_unit_id || '/' || specification_type AS key
    FROM ${relation} WHERE ${where} ORDER BY ${time}, cooling_unit_id, specification_type::text COLLATE "C"`);
  return rows.map((row) => row.key);
}

eachProfile(t, async (t, profile) => {
  const world = await createSensorWorld(t, profile);
  const { a1, a3, get, load, expired } = world;

  await t.test('a walk by cursor holds every record once, in order, its pages numbered', async (t) => {
    for (const [aggregation, relation, time, pageSize] of [
      ['raw', 'sensor_readings', 'recorded_at', 997],
      ['raw', 'sensor_readings', 'recorded_at', 1000],
      ['hourly', 'sensor_readings_hourly', 'bucket', 100],
      ['daily', 'sensor_readings_daily', 'bucket', 7],
    ] as const) {
      const expected = await storedKeys(world, relation, time);
      const { pages, cursor } = await walk(
        world,
        `aggregation=${aggregation}&start_date=2026-03-01&end_date=2026-03-15&page_size=${pageSize}`,
      );
      const label = `${aggregation}, ${pageSize} a page`;
      t.same(
        pages.flatMap((page) => page.data.map(keyOf)),
        expected,
        `${label}: every record once, in order`,
      );
      t.same(
        pages.map((page) => page.meta.pagination.page),
        pages.map((_, index) => index + 1),
        `${label}: pages numbered 1..${pages.length}`,
      );
      t.ok(
        pages.slice(0, -1).every((page) => page.data.length === pageSize && page.meta.pagination.has_next),
        `${label}: every page but the last is full and has a next`,
      );
      t.equal(pages.length, Math.ceil(expected.length / pageSize), `${label}: no empty page at the end`);
      t.equal(cursor, null, `${label}: the last page has no next_cursor`);
      t.equal(pages.at(-1)!.meta.pagination.total_count, expected.length, `${label}: the last page counts every record`);
      t.equal(pages.at(-1)!.meta.pagination.total_pages, pages.length, `${label}: and as many pages as there were`);
    }
  });

  await t.test('readings landing during a walk: none stored before it missed or repeated, the rest in the feed', async (t) => {
    const query = 'start_date=2026-03-01&end_date=2026-03-15&page_size=500';
    const since = (await world.ctx.app.inject({ url: '/api/v1/sensor-data/changes?since=now', headers: world.all.headers })).json<{
      meta: { pagination: { next_cursor: string } };
    }>().meta.pagination.next_cursor;
    const before = await storedKeys(world, 'sensor_readings', 'recorded_at');
    const late = [
      // behind the walk's position once page 3 is read (page 3 ends around 2026-03-06)
      `${a1},TEMPERATURE,2026-03-05T00:07:00Z,4.25`,
      `${a3},HUMIDITY,2026-03-05T03:07:00Z,81`,
      // ahead of it
      `${a1},HUMIDITY,2026-03-12T10:07:00Z,79.5`,
      `${a3},TEMPERATURE,2026-03-15T11:59:00Z,3.5`,
    ];
    const { pages } = await walk(world, query, async (page) => {
      // another client's pages, by number and by cursor, between this walk's
      await get(`${query}&page=${page + 1}`);
      await get(query);
      if (page === 3) {
        await load(`${CSV_HEADER}\n${late.join('\n')}\n`);
        // a re-sent reading is no new record
        await load(`${CSV_HEADER}\n${before[0]!.split('/')[1]},${before[0]!.split('/')[2]},${before[0]!.split('/')[0]},1\n`);
        // the counts pages are placed by are fresh again: they now count the late readings
        expired();
      }
    });
    const seen = pages.flatMap((page) => page.data.map(keyOf));
    t.equal(new Set(seen).size, seen.length, 'no record twice');
    const seenSet = new Set(seen);
    t.same(
      before.filter((key) => !seenSet.has(key)),
      [],
      'every record stored before the walk began is in it',
    );
    const lateKeys = late.map((line) => {
      const [unit, type, at] = line.split(',');
      return `${at}/${unit}/${type}`;
    });
    t.same(
      lateKeys.filter((key) => seenSet.has(key)),
      lateKeys.slice(2),
      'the late readings ahead of the walk are in it, those behind it not',
    );
    const { data: changes } = (
      await world.ctx.app.inject({
        url: `/api/v1/sensor-data/changes?since=${since}&page_size=1000`,
        headers: world.all.headers,
      })
    ).json<{ data: Array<{ cooling_unit_id: number; specification_type: string; from: string; to: string }> }>();
    for (const key of lateKeys.slice(0, 2)) {
      const [at, unit, type] = key.split('/');
      t.ok(
        changes.some(
          (change) =>
            change.cooling_unit_id === Number(unit) && change.specification_type === type && change.from <= at! && at! <= change.to,
        ),
        `${key}: in the change feed after the cursor taken before the walk`,
      );
    }
  });

  await t.test('has_next is true exactly when a record follows, also while the counts lag', async (t) => {
    const day = `cooling_unit_id=${a3}&start_date=2026-03-15&end_date=2026-03-15&aggregation=hourly&specification_type=HUMIDITY`;
    expired();
    const full = await get(day);
    const records = full.body.data.length;
    const exact = await get(`${day}&page_size=${records}`);
    t.same(
      [exact.body.meta.pagination.has_next, exact.body.meta.pagination.next_cursor],
      [false, null],
      'a page holding the last record: no next',
    );
    // a new hour lands after it; the counts (cached) do not know it yet
    await load(`${CSV_HEADER}\n${a3},HUMIDITY,2026-03-15T12:10:00Z,70\n`);
    const stale = await get(`${day}&page_size=${records}`);
    t.equal(stale.body.meta.pagination.has_next, true, 'by page number: has_next, though the counts lag');
    t.equal(stale.body.meta.pagination.total_count, records + 1, 'and the total says the record is there');
    const rest = await get(`${day}&cursor=${stale.body.meta.pagination.next_cursor}&page_size=${records}`);
    t.same(
      rest.body.data.map((r) => r.timestamp),
      ['2026-03-15T12:00:00Z'],
      'by cursor: the record that followed',
    );
    t.match(rest.body.meta.pagination, { page: 2, has_next: false, has_previous: true, next_cursor: null });
    const past = await get(`${day}&page_size=${records}&page=2`);
    t.same(past.body.data.length, 1, 'page 2 by number, counted again rather than called empty');
  });

  await t.test("a cursor keeps its walk's window when its dates were left out and the day turns", async (t) => {
    const first = await get(`cooling_unit_id=${a1}&aggregation=daily&page_size=5`);
    t.equal(first.body.meta.filters.end_date, '2026-03-15');
    world.ctx.clock.advance(DAY_MS);
    const second = await get(`cooling_unit_id=${a1}&aggregation=daily&page_size=5&cursor=${first.body.meta.pagination.next_cursor}`);
    t.equal(second.status, 200);
    t.same([second.body.meta.filters.start_date, second.body.meta.filters.end_date], ['2026-02-14', '2026-03-15'], "the walk's window");
    world.ctx.clock.set(new Date(world.ctx.clock.now().getTime() - DAY_MS));
  });

  await t.test('a cursor is refused when it is not for this walk: 400, and nothing read', async (t) => {
    const query = `cooling_unit_id=${a1}&start_date=2026-03-10&end_date=2026-03-12&page_size=10`;
    const cursor = (await get(query)).body.meta.pagination.next_cursor as string;
    const other = await issueToken(world.ctx, world.b.employeeId, { scopes: ['sensor_data'] });
    const edited = `${cursor.slice(0, 40)}${cursor[40] === 'A' ? 'B' : 'A'}${cursor.slice(41)}`;
    for (const [label, request, field, headers] of [
      ['edited', `${query}&cursor=${edited}`, 'cursor', world.all.headers],
      ['garbled', `${query}&cursor=not-a-cursor`, 'cursor', world.all.headers],
      ["another company's token", `start_date=2026-03-10&end_date=2026-03-12&page_size=10&cursor=${cursor}`, 'cursor', other.headers],
      ['other filters', `${query}&specification_type=HUMIDITY&cursor=${cursor}`, 'cursor', world.all.headers],
      ['another aggregation', `${query}&aggregation=hourly&cursor=${cursor}`, 'cursor', world.all.headers],
      [
        'another window',
        `cooling_unit_id=${a1}&start_date=2026-03-09&end_date=2026-03-12&cursor=${cursor}`,
        'start_date',
        world.all.headers,
      ],
      ['beside a page number', `${query}&page=2&cursor=${cursor}`, 'page', world.all.headers],
      ['given twice', `${query}&cursor=${cursor}&cursor=${cursor}`, 'cursor', world.all.headers],
    ] as const) {
      const { status, body } = await get(request, headers);
      t.equal(status, 400, `${label}: 400`);
      t.equal(body.error?.details?.field, field, `${label}: names ${field}`);
      t.notOk('data' in body, `${label}: no records`);
    }
    const fine = await get(`${query}&cursor=${cursor}`);
    t.equal(fine.status, 200, 'the same cursor with its own filters: 200');
    t.equal(fine.body.meta.pagination.page, 2);
  });
});
