// GET /api/v1/sensor-data, in both storage profiles (test/helpers/sensor-world.ts): raw readings
// and hourly/daily aggregates in order, every page once at any depth, the newest readings at once,
// filters and their defaults echoed.
import t from 'tap';
import { createSensorWorld, eachProfile } from '../../helpers/sensor-world.js';

eachProfile(t, async (t, profile) => {
  const { a, a1, a2, a3, get, one, load, expired, db } = await createSensorWorld(t, profile);
  const pool = db.pool;

  await t.test('raw readings of one unit, in order, paged', async (t) => {
    const { status, body } = await get(`cooling_unit_id=${a1}&start_date=2026-03-05&end_date=2026-03-15&page_size=1000`);
    t.equal(status, 200);
    const expected = await one<{ n: number }>('SELECT count(*)::int AS n FROM sensor_readings WHERE cooling_unit_id = $1', [a1]);
    const { next_cursor: nextCursor, ...pagination } = body.meta.pagination;
    t.same(pagination, {
      page: 1,
      page_size: 1000,
      total_count: expected.n,
      total_pages: Math.ceil(expected.n / 1000),
      has_next: true,
      has_previous: false,
    });
    t.match(nextCursor, /^[A-Za-z0-9_-]{84}$/, 'a cursor for the next page');
    t.same(body.meta.filters, {
      start_date: '2026-03-05',
      end_date: '2026-03-15',
      cooling_unit_id: a1,
      location_id: null,
      specification_type: ['TEMPERATURE', 'HUMIDITY'],
      aggregation: 'raw',
    });
    t.equal(body.meta.company_id, a.companyId);
    const head = body.data[0]!;
    t.same(Object.keys(head), ['timestamp', 'cooling_unit_id', 'specification_type', 'value', 'sample_count'], 'raw: no min or max');
    t.match(head, { timestamp: '2026-03-05T00:00:00Z', cooling_unit_id: a1, specification_type: 'HUMIDITY', sample_count: 1 });
    t.equal(body.data[1]!.specification_type, 'TEMPERATURE', 'HUMIDITY before TEMPERATURE at one instant');
    t.ok(
      body.data.every((r) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(r.timestamp as string)),
      'ISO 8601 UTC timestamps',
    );
  });

  await t.test('every page of the company history, sequential and random access', async (t) => {
    const { rows: expected } = await pool.query<{ key: string }>(`
      SELECT sensor_timestamp_text(recorded_at) || '/' || cooling_unit_id || '/' || specification_type AS key
      FROM sensor_readings ORDER BY recorded_at, cooling_unit_id, specification_type::text COLLATE "C"`);
    const keyOf = (r: Record<string, unknown>) => `${r.timestamp}/${r.cooling_unit_id}/${r.specification_type}`;
    const seen: string[] = [];
    for (let page = 1; ; page++) {
      const { body } = await get(`start_date=2026-03-01&end_date=2026-03-15&page_size=997&page=${page}`);
      seen.push(...body.data.map(keyOf));
      t.equal(body.meta.pagination.total_count, expected.length);
      if (!body.meta.pagination.has_next) break;
    }
    t.same(
      seen,
      expected.map((row) => row.key),
      'pages read in turn hold every reading once, in order',
    );
    for (const [page, size] of [
      [5, 700],
      [2, 1000],
      [9, 613],
      [1, 1],
    ] as const) {
      const { body } = await get(`start_date=2026-03-01&end_date=2026-03-15&page_size=${size}&page=${page}`);
      t.same(
        body.data.map(keyOf),
        expected.slice((page - 1) * size, page * size).map((row) => row.key),
        `page ${page} of ${size}, cold`,
      );
    }
    const { status, body } = await get('start_date=2026-03-01&end_date=2026-03-15&page_size=1000&page=99');
    t.equal(status, 200, 'a page past the last is 200');
    t.same(body.data, []);
    t.match(body.meta.pagination, { page: 99, has_next: false, has_previous: true });
  });

  await t.test('hourly and daily aggregates', async (t) => {
    const { body } = await get(
      `aggregation=hourly&cooling_unit_id=${a2}&specification_type=TEMPERATURE&start_date=2026-03-10&end_date=2026-03-10&page_size=1000`,
    );
    t.equal(body.meta.pagination.total_count, 24);
    t.same(Object.keys(body.data[0]!), ['timestamp', 'cooling_unit_id', 'specification_type', 'value', 'sample_count', 'min', 'max']);
    t.match(body.data[13], { timestamp: '2026-03-10T13:00:00Z', cooling_unit_id: a2, specification_type: 'TEMPERATURE', sample_count: 4 });
    const raw = await one<{ value: number; min: number; max: number }>(
      `
      SELECT avg(value) AS value, min(value) AS min, max(value) AS max FROM sensor_readings
      WHERE cooling_unit_id = $1 AND specification_type = 'TEMPERATURE' AND recorded_at >= '2026-03-10T13:00:00Z' AND recorded_at < '2026-03-10T14:00:00Z'`,
      [a2],
    );
    t.ok(Math.abs((body.data[13]!.value as number) - raw.value) < 1e-9, "value is the hour's mean");
    t.same([body.data[13]!.min, body.data[13]!.max], [raw.min, raw.max]);

    const daily = await get('aggregation=daily&start_date=2017-01-01&end_date=2026-03-15&page_size=1000');
    t.equal(daily.status, 200, '3,660 days with aggregation=daily');
    const rows = await one<{ n: number; readings: number }>(
      'SELECT count(*)::int AS n, sum(sample_count)::int AS readings FROM sensor_readings_daily',
    );
    t.equal(daily.body.meta.pagination.total_count, rows.n);
    t.equal(
      daily.body.data.reduce((sum, r) => sum + (r.sample_count as number), 0),
      rows.readings,
      'daily sample_count covers every reading',
    );
    const hourlyAll = await get('aggregation=hourly&start_date=2026-03-01&end_date=2026-03-15&page_size=100&page=9');
    const { rows: expected } = await pool.query<{ timestamp: string; cooling_unit_id: number; specification_type: string }>(`
      SELECT sensor_timestamp_text(bucket) AS timestamp, cooling_unit_id, specification_type::text AS specification_type
      FROM sensor_readings_hourly ORDER BY bucket, cooling_unit_id, specification_type::text COLLATE "C" OFFSET 800 LIMIT 100`);
    t.same(
      hourlyAll.body.data.map((r) => [r.timestamp, r.cooling_unit_id, r.specification_type]),
      expected.map((r) => [r.timestamp, r.cooling_unit_id, r.specification_type]),
      'hourly page 9 of 100',
    );
  });

  await t.test('the newest readings count in the hourly aggregate at once', async (t) => {
    const before = await get(`aggregation=hourly&cooling_unit_id=${a3}&start_date=2026-03-15&end_date=2026-03-15`);
    t.equal(before.body.meta.pagination.total_count, 24, '12 hours x 2 types so far');
    await load(`cooling_unit_id,specification_type,recorded_at,value\n${a3},TEMPERATURE,2026-03-15T12:05:00Z,9.5\n`);
    expired();
    const after = await get(`aggregation=hourly&cooling_unit_id=${a3}&start_date=2026-03-15&end_date=2026-03-15`);
    t.equal(after.body.meta.pagination.total_count, 25);
    t.match(after.body.data.at(-1), {
      timestamp: '2026-03-15T12:00:00Z',
      specification_type: 'TEMPERATURE',
      value: 9.5,
      min: 9.5,
      max: 9.5,
      sample_count: 1,
    });
  });

  await t.test('filters, and the defaults echoed', async (t) => {
    const humidity = await get(`cooling_unit_id=${a1}&specification_type=HUMIDITY&start_date=2026-03-10&end_date=2026-03-10`);
    t.ok(
      humidity.body.data.length > 0 && humidity.body.data.every((r) => r.specification_type === 'HUMIDITY'),
      'specification_type filters',
    );
    t.same(humidity.body.meta.filters.specification_type, ['HUMIDITY']);
    const both = await get(
      `cooling_unit_id=${a1}&specification_type=HUMIDITY,TEMPERATURE,HUMIDITY&start_date=2026-03-10&end_date=2026-03-10`,
    );
    t.same(both.body.meta.filters.specification_type, ['TEMPERATURE', 'HUMIDITY'], 'a list, echoed in canonical order');
    const defaults = await get('');
    t.same(
      defaults.body.meta.filters,
      {
        start_date: '2026-02-14',
        end_date: '2026-03-15',
        cooling_unit_id: null,
        location_id: null,
        specification_type: ['TEMPERATURE', 'HUMIDITY'],
        aggregation: 'raw',
      },
      'defaults echoed',
    );
    t.same(defaults.body.meta.pagination.page_size, 100);
  });
});
