// The sensor history suite, run unchanged against both storage profiles (postgres.test.ts on the
// local PostgreSQL, timescale.test.ts on PGlite + TimescaleDB): the store's aggregates, the
// ingest, and GET /api/v1/sensor-data must behave the same whatever is underneath.
import { Readable } from 'node:stream';
import type { Test } from 'tap';
import { lineRuns, parseReadings, ReadingValidator, type ReadingFormat } from '../../src/sensors/formats.js';
import { readingChunks } from '../../src/sensors/generate.js';
import { COUNTS_TTL_MS } from '../../src/sensors/history.js';
import { IngestAborted, ingestReadings, type IngestOptions } from '../../src/sensors/ingest.js';
import { compactRollups, maintainStore, materializeAggregates, storageProfile, type StorageProfile } from '../../src/sensors/store.js';
import type { TestApp } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { issueToken } from '../helpers/tokens.js';

export interface SuiteContext {
  ctx: TestApp;
  profile: StorageProfile;
  /** PGlite's wire protocol cannot COPY FROM STDIN */
  transport: 'copy' | 'insert';
}

const NOW = new Date('2026-03-15T12:07:00Z');
const DAY = 86_400_000;

interface Page {
  data: Record<string, unknown>[];
  meta: { company_id: number; filters: Record<string, unknown>; pagination: Record<string, number | boolean> };
}

export async function sensorDataSuite(t: Test, { ctx, profile, transport }: SuiteContext) {
  ctx.clock.set(NOW);
  const pool = ctx.db.pool;
  t.equal(await storageProfile(pool), profile, `the database has the ${profile} profile`);

  const a = await createCompany(pool, 'Sensor Co');
  const b = await createCompany(pool, 'Other Co');
  const [a1, a2, a3] = a.unitIds as [number, number, number];
  const all = await issueToken(ctx, a.employeeId, { scopes: ['sensor_data'] });

  const load = (text: string, options: IngestOptions & { format?: ReadingFormat } = {}) =>
    ingestReadings(pool, parseReadings(lineRuns(Readable.from([text])), options.format ?? 'csv',
      new ReadingValidator(() => ctx.clock.now())), { transport, ...options });
  const get = async (query: string, headers = all.headers) => {
    const response = await ctx.app.inject({ method: 'GET', url: `/api/v1/sensor-data?${query}`, headers });
    return { status: response.statusCode, body: response.json() as Page & { error?: { code: string; details?: { field?: string } } } };
  };
  const one = async <T>(text: string, params: unknown[] = []) => (await pool.query(text, params)).rows[0] as T;
  const expired = () => ctx.clock.advance(COUNTS_TTL_MS + 1000);

  // ten and a half days of readings for company A's three units, loaded through the ingest
  const generated = [...readingChunks({ units: 3, firstUnitId: a1, days: 10, end: new Date('2026-03-15T00:00:00Z'), seed: 7 })].join('');
  const first = await load(generated, { batchSize: 2000 });
  t.same(first, { rows: 5760, inserted: 5760, duplicates: 0, bad: 0, batches: 3, abortedAt: null }, 'CSV loaded in batches');
  // and the morning of today, up to 11:45
  const morning = [...readingChunks({ units: 3, firstUnitId: a1, days: 1, end: new Date('2026-03-16T00:00:00Z'), seed: 8 })]
    .join('').split('\n').filter((line, index) => index === 0 || (line.split(',')[2] ?? '~') < '2026-03-15T12:00:00Z').join('\n');
  await load(morning);
  // what TimescaleDB's refresh policy would have done by now; later readings stay real-time
  await materializeAggregates(pool, profile, new Date('2026-03-14T00:00:00Z'));

  const consistent = async (t: Test, label: string) => {
    const totals = await one<{ raw: string; hourly: string; daily: string; hours: string; hourly_rows: string }>(`
      SELECT (SELECT count(*) FROM sensor_readings)::text AS raw,
             (SELECT sum(sample_count) FROM sensor_readings_hourly)::text AS hourly,
             (SELECT sum(sample_count) FROM sensor_readings_daily)::text AS daily,
             (SELECT sum(hour_count) FROM sensor_readings_daily)::text AS hours,
             (SELECT count(*) FROM sensor_readings_hourly)::text AS hourly_rows`);
    t.equal(totals.hourly, totals.raw, `${label}: raw count = sum of hourly sample_count`);
    t.equal(totals.daily, totals.raw, `${label}: raw count = sum of daily sample_count`);
    t.equal(totals.hours, totals.hourly_rows, `${label}: daily hour_count adds up to the hourly rows`);
    const { rows: days } = await pool.query<{ mismatched: string; days: string }>(`
      WITH raw AS (
        SELECT date_bin('1 day', recorded_at, '2000-01-01 00:00:00+00') AS bucket, cooling_unit_id, specification_type,
               avg(value) AS value, min(value) AS min, max(value) AS max, count(*) AS sample_count,
               count(DISTINCT date_bin('1 hour', recorded_at, '2000-01-01 00:00:00+00')) AS hours
        FROM sensor_readings GROUP BY 1, 2, 3)
      SELECT count(*) FILTER (WHERE d.bucket IS NULL OR r.bucket IS NULL OR abs(d.value - r.value) > 1e-9
        OR d.min <> r.min OR d.max <> r.max OR d.sample_count <> r.sample_count OR d.hour_count <> r.hours)::text AS mismatched,
        count(*)::text AS days
      FROM raw r FULL JOIN sensor_readings_daily d USING (bucket, cooling_unit_id, specification_type)`);
    t.equal(days[0]!.mismatched, '0', `${label}: every daily value is the mean of its readings (and min, max, counts agree)`);
  };

  await t.test('the aggregates agree with the readings', async (t) => {
    await consistent(t, 'after loading');
    const hour = await one<{ value: number; min: number; max: number; sample_count: number }>(`
      SELECT value, min, max, sample_count FROM sensor_readings_hourly
      WHERE cooling_unit_id = $1 AND specification_type = 'TEMPERATURE' AND bucket = '2026-03-10T13:00:00Z'`, [a1]);
    const raw = await one<{ value: number; min: number; max: number; n: number }>(`
      SELECT avg(value) AS value, min(value) AS min, max(value) AS max, count(*)::int AS n FROM sensor_readings
      WHERE cooling_unit_id = $1 AND specification_type = 'TEMPERATURE'
        AND recorded_at >= '2026-03-10T13:00:00Z' AND recorded_at < '2026-03-10T14:00:00Z'`, [a1]);
    t.equal(hour.sample_count, 4, 'four readings an hour');
    t.ok(Math.abs(hour.value - raw.value) < 1e-9, 'hourly value is the mean');
    t.same([hour.min, hour.max, hour.sample_count], [raw.min, raw.max, raw.n], 'hourly min, max, sample_count');
  });

  await t.test('raw readings of one unit, in order, paged', async (t) => {
    const { status, body } = await get(`cooling_unit_id=${a1}&start_date=2026-03-05&end_date=2026-03-15&page_size=1000`);
    t.equal(status, 200);
    const expected = await one<{ n: number }>('SELECT count(*)::int AS n FROM sensor_readings WHERE cooling_unit_id = $1', [a1]);
    t.same(body.meta.pagination, { page: 1, page_size: 1000, total_count: expected.n, total_pages: Math.ceil(expected.n / 1000), has_next: true, has_previous: false });
    t.same(body.meta.filters, { start_date: '2026-03-05', end_date: '2026-03-15', cooling_unit_id: a1, location_id: null, specification_type: ['TEMPERATURE', 'HUMIDITY'], aggregation: 'raw' });
    t.equal(body.meta.company_id, a.companyId);
    const head = body.data[0]!;
    t.same(Object.keys(head), ['timestamp', 'cooling_unit_id', 'specification_type', 'value', 'sample_count'], 'raw: no min or max');
    t.match(head, { timestamp: '2026-03-05T00:00:00Z', cooling_unit_id: a1, specification_type: 'HUMIDITY', sample_count: 1 });
    t.equal(body.data[1]!.specification_type, 'TEMPERATURE', 'HUMIDITY before TEMPERATURE at one instant');
    t.ok(body.data.every((r) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(r.timestamp as string)), 'ISO 8601 UTC timestamps');
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
    t.same(seen, expected.map((row) => row.key), 'pages read in turn hold every reading once, in order');
    for (const [page, size] of [[5, 700], [2, 1000], [9, 613], [1, 1]] as const) {
      const { body } = await get(`start_date=2026-03-01&end_date=2026-03-15&page_size=${size}&page=${page}`);
      t.same(body.data.map(keyOf), expected.slice((page - 1) * size, page * size).map((row) => row.key), `page ${page} of ${size}, cold`);
    }
    const { status, body } = await get('start_date=2026-03-01&end_date=2026-03-15&page_size=1000&page=99');
    t.equal(status, 200, 'a page past the last is 200');
    t.same(body.data, []);
    t.match(body.meta.pagination, { page: 99, has_next: false, has_previous: true });
  });

  await t.test('hourly and daily aggregates', async (t) => {
    const { body } = await get(`aggregation=hourly&cooling_unit_id=${a2}&specification_type=TEMPERATURE&start_date=2026-03-10&end_date=2026-03-10&page_size=1000`);
    t.equal(body.meta.pagination.total_count, 24);
    t.same(Object.keys(body.data[0]!), ['timestamp', 'cooling_unit_id', 'specification_type', 'value', 'sample_count', 'min', 'max']);
    t.match(body.data[13], { timestamp: '2026-03-10T13:00:00Z', cooling_unit_id: a2, specification_type: 'TEMPERATURE', sample_count: 4 });
    const raw = await one<{ value: number; min: number; max: number }>(`
      SELECT avg(value) AS value, min(value) AS min, max(value) AS max FROM sensor_readings
      WHERE cooling_unit_id = $1 AND specification_type = 'TEMPERATURE' AND recorded_at >= '2026-03-10T13:00:00Z' AND recorded_at < '2026-03-10T14:00:00Z'`, [a2]);
    t.ok(Math.abs((body.data[13]!.value as number) - raw.value) < 1e-9, 'value is the hour\'s mean');
    t.same([body.data[13]!.min, body.data[13]!.max], [raw.min, raw.max]);

    const daily = await get('aggregation=daily&start_date=2017-01-01&end_date=2026-03-15&page_size=1000');
    t.equal(daily.status, 200, '3,660 days with aggregation=daily');
    const rows = await one<{ n: number; readings: number }>('SELECT count(*)::int AS n, sum(sample_count)::int AS readings FROM sensor_readings_daily');
    t.equal(daily.body.meta.pagination.total_count, rows.n);
    t.equal(daily.body.data.reduce((sum, r) => sum + (r.sample_count as number), 0), rows.readings, 'daily sample_count covers every reading');
    const hourlyAll = await get('aggregation=hourly&start_date=2026-03-01&end_date=2026-03-15&page_size=100&page=9');
    const { rows: expected } = await pool.query<{ timestamp: string; cooling_unit_id: number; specification_type: string }>(`
      SELECT sensor_timestamp_text(bucket) AS timestamp, cooling_unit_id, specification_type::text AS specification_type
      FROM sensor_readings_hourly ORDER BY bucket, cooling_unit_id, specification_type::text COLLATE "C" OFFSET 800 LIMIT 100`);
    t.same(hourlyAll.body.data.map((r) => [r.timestamp, r.cooling_unit_id, r.specification_type]),
      expected.map((r) => [r.timestamp, r.cooling_unit_id, r.specification_type]), 'hourly page 9 of 100');
  });

  await t.test('the newest readings count in the hourly aggregate at once', async (t) => {
    const before = await get(`aggregation=hourly&cooling_unit_id=${a3}&start_date=2026-03-15&end_date=2026-03-15`);
    t.equal(before.body.meta.pagination.total_count, 24, '12 hours x 2 types so far');
    await load(`cooling_unit_id,specification_type,recorded_at,value\n${a3},TEMPERATURE,2026-03-15T12:05:00Z,9.5\n`);
    expired();
    const after = await get(`aggregation=hourly&cooling_unit_id=${a3}&start_date=2026-03-15&end_date=2026-03-15`);
    t.equal(after.body.meta.pagination.total_count, 25);
    t.match(after.body.data.at(-1), { timestamp: '2026-03-15T12:00:00Z', specification_type: 'TEMPERATURE', value: 9.5, min: 9.5, max: 9.5, sample_count: 1 });
  });

  await t.test('late readings land in the aggregates, duplicates never count twice', async (t) => {
    const hourOf = () => one<{ value: number; sample_count: number }>(`
      SELECT value, sample_count FROM sensor_readings_hourly
      WHERE cooling_unit_id = $1 AND specification_type = 'HUMIDITY' AND bucket = '2026-03-06T10:00:00Z'`, [a1]);
    const dayOf = () => one<{ sample_count: number }>(`SELECT sample_count FROM sensor_readings_daily
      WHERE cooling_unit_id = $1 AND specification_type = 'HUMIDITY' AND bucket = '2026-03-06T00:00:00Z'`, [a1]);
    const hour = await hourOf();
    t.equal(hour.sample_count, 4);
    // eight days late, in the part TimescaleDB has already materialized
    const late = `{"cooling_unit_id":${a1},"specification_type":"HUMIDITY","recorded_at":"2026-03-06T10:07:00Z","value":50}\n`;
    t.match(await load(late, { format: 'ndjson' }), { inserted: 1, duplicates: 0 }, 'NDJSON');
    const grown = await hourOf();
    t.equal(grown.sample_count, 5, 'the late reading is in its hour');
    t.ok(Math.abs(grown.value - (hour.value * 4 + 50) / 5) < 1e-9, 'and in its mean');
    t.equal((await dayOf()).sample_count, 97, 'and in its day');

    t.match(await load(late, { format: 'ndjson' }), { inserted: 0, duplicates: 1 }, 'the same reading again is a duplicate');
    const twice = `cooling_unit_id,specification_type,recorded_at,value\n${a1},HUMIDITY,2026-03-06T10:08:00Z,1\n${a1},HUMIDITY,2026-03-06T10:08:00+00:00,2\n`;
    t.match(await load(twice), { inserted: 1, duplicates: 1 }, 'a duplicate within one batch');
    t.match(await load(generated.split('\n').slice(0, 200).join('\n')), { inserted: 0, duplicates: 199 }, 'a batch delivered twice');
    t.equal((await hourOf()).sample_count, 6, 'each counted once');
    t.equal((await dayOf()).sample_count, 98);
    await consistent(t, 'after late readings and duplicates');
  });

  await t.test('the store\'s upkeep keeps the aggregates exact', async (t) => {
    const before = await get(`aggregation=hourly&cooling_unit_id=${a1}&start_date=2026-03-05&end_date=2026-03-15&page_size=1000`);
    // April 10th: March is closed (postgres profile: its rollups compacted; timescale: nothing to do)
    await maintainStore(pool, new Date('2026-04-10T00:00:00Z'));
    t.equal(await compactRollups(pool, new Date('2026-04-10T00:00:00Z')), profile === 'postgres' ? 1 : 0);
    await consistent(t, 'after compaction');
    expired();
    const after = await get(`aggregation=hourly&cooling_unit_id=${a1}&start_date=2026-03-05&end_date=2026-03-15&page_size=1000`);
    t.same(after.body, before.body, 'the same history');
    await load(`cooling_unit_id,specification_type,recorded_at,value\n${a2},TEMPERATURE,2026-03-07T08:09:00Z,4\n`);
    await consistent(t, 'a late reading into a compacted month');
  });

  await t.test('ingest: bad rows by line number, skipped or aborting, whole batches only', async (t) => {
    const count = async () => (await one<{ n: number }>('SELECT count(*)::int AS n FROM sensor_readings WHERE cooling_unit_id = $1', [a3])).n;
    const rows = (hours: number[]) => hours.map((h) => `${a3},TEMPERATURE,2026-03-15T0${h}:01:00Z,4.5`);
    const file = ['cooling_unit_id,specification_type,recorded_at,value', ...rows([1, 2, 3]),
      `${a3},TEMPERATURE,yesterday,4.5`, ...rows([4]), `${a3},COLD,2026-03-15T05:01:00Z,1`, `999999,HUMIDITY,2026-03-15T06:01:00Z,1`,
      `${a3},HUMIDITY,2026-03-15T07:01:00Z,abc`, ...rows([8, 9])].join('\n');

    const start = await count();
    const bad: { line: number; reason: string }[] = [];
    const skipped = await load(file, { onError: 'skip', batchSize: 3, onBadRow: (row) => bad.push(row) });
    // rows failing validation are reported as read, unknown units when their batch loads
    t.same(bad.map((row) => row.line).sort((x, y) => x - y), [5, 7, 8, 9], 'each bad row by its line number');
    const reason = (line: number) => bad.find((row) => row.line === line)?.reason;
    t.match(reason(5), /recorded_at/);
    t.match(reason(7), /specification_type/);
    t.match(reason(8), /cooling unit 999999 does not exist/);
    t.match(reason(9), /value/);
    t.match(skipped, { rows: 10, inserted: 6, bad: 4 });
    t.equal(await count(), start + 6, 'skip: the good rows load');

    const aborting = ['cooling_unit_id,specification_type,recorded_at,value', ...rows([1, 2, 3]).map((r) => r.replace(':01:', ':02:')),
      ...rows([4, 5]).map((r) => r.replace(':01:', ':02:')), `${a3},TEMPERATURE,2026-03-15T06:02:00Z,oops`].join('\n');
    const error = await load(aborting, { onError: 'abort', batchSize: 3 }).catch((e: unknown) => e);
    t.ok(error instanceof IngestAborted, 'abort stops the run');
    t.equal((error as IngestAborted).bad.line, 7);
    t.equal(await count(), start + 6 + 3, 'the first batch loaded; the batch holding the bad row did not, not even its good rows');
  });

  await t.test('filters, windows and validation', async (t) => {
    const humidity = await get(`cooling_unit_id=${a1}&specification_type=HUMIDITY&start_date=2026-03-10&end_date=2026-03-10`);
    t.ok(humidity.body.data.length > 0 && humidity.body.data.every((r) => r.specification_type === 'HUMIDITY'), 'specification_type filters');
    t.same(humidity.body.meta.filters.specification_type, ['HUMIDITY']);
    const both = await get(`cooling_unit_id=${a1}&specification_type=HUMIDITY,TEMPERATURE,HUMIDITY&start_date=2026-03-10&end_date=2026-03-10`);
    t.same(both.body.meta.filters.specification_type, ['TEMPERATURE', 'HUMIDITY'], 'a list, echoed in canonical order');
    const defaults = await get('');
    t.same(defaults.body.meta.filters, { start_date: '2026-02-14', end_date: '2026-03-15', cooling_unit_id: null, location_id: null, specification_type: ['TEMPERATURE', 'HUMIDITY'], aggregation: 'raw' }, 'defaults echoed');
    t.same(defaults.body.meta.pagination.page_size, 100);

    for (const [query, field] of [
      ['specification_type=PRESSURE', 'specification_type'], ['specification_type=', 'specification_type'],
      ['aggregation=weekly', 'aggregation'], ['page_size=1001', 'page_size'], ['page=0', 'page'], ['sort=desc', 'sort'],
      ['period=day', 'period'], ['start_date=2025-03-13&end_date=2026-03-14', 'start_date'], ['aggregation=hourly&start_date=2025-03-13&end_date=2026-03-14', 'start_date'],
      ['aggregation=daily&start_date=2016-03-01&end_date=2026-03-14', 'start_date'], ['end_date=2026-02-30', 'end_date'],
      ['start_date=2026-03-10&end_date=2026-03-09', 'end_date'],
      ['start_date=0000-12-31&end_date=0001-01-01', 'start_date'],
    ] as const) {
      const { status, body } = await get(query);
      t.equal(status, 400, query);
      t.equal(body.error?.details?.field, field, `${query}: field`);
    }

    // the calendar's edges are ordinary empty windows: the end of 9999-12-31 is an instant in the
    // year 10000, and the years 1-99 are not 1901-1999
    for (const aggregation of ['raw', 'hourly', 'daily']) {
      for (const [start, end] of [['9999-12-31', '9999-12-31'], ['9999-01-01', '9999-12-31'], ['0001-01-01', '0001-12-31'], ['0050-03-01', '0050-03-02']]) {
        const { status, body } = await get(`aggregation=${aggregation}&start_date=${start}&end_date=${end}`);
        t.equal(status, 200, `${aggregation} ${start}..${end}: 200`);
        t.same(body.data, [], `${aggregation} ${start}..${end}: no readings`);
        t.same([body.meta.filters.start_date, body.meta.filters.end_date], [start, end], `${aggregation} ${start}..${end}: echoed as asked`);
      }
    }
  });

  await t.test('a token reads only its units', async (t) => {
    const narrow = await issueToken(ctx, a.employeeId, { scopes: ['sensor_data'], cooling_unit_ids: [a2] });
    const mine = await get('start_date=2026-03-10&end_date=2026-03-10&page_size=1000', narrow.headers);
    t.ok(mine.body.data.length > 0 && mine.body.data.every((r) => r.cooling_unit_id === a2), 'without cooling_unit_id: only the token\'s units');
    t.equal(mine.body.meta.pagination.total_count, 192);
    for (const unit of [a1, b.unitIds[0]!, a.deletedUnitId, 2_000_000]) {
      t.equal((await get(`cooling_unit_id=${unit}`, narrow.headers)).status, 404, `unit ${unit} is 404 for a token restricted to ${a2}`);
    }
    t.equal((await get(`cooling_unit_id=${b.unitIds[0]}`)).status, 404, 'another company\'s unit is 404 for a company-wide token');
    const other = await issueToken(ctx, b.employeeId, { scopes: ['sensor_data'] });
    const empty = await get('start_date=2026-03-10&end_date=2026-03-10', other.headers);
    t.same([empty.status, empty.body.data, empty.body.meta.pagination.total_count], [200, [], 0], 'company B sees none of A\'s readings');
    const noScope = await issueToken(ctx, a.employeeId, { scopes: ['utilization'] });
    t.equal((await get('', noScope.headers)).status, 403, 'without the sensor_data scope: 403');
    t.equal((await get('', {} as never)).status, 401, 'without a token: 401');
  });
}
