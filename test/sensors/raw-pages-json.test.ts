// Raw sensor pages are written as JSON by PostgreSQL (sql/queries/sensor-data.sql, rawPageJson)
// instead of being read as rows and serialized by fast-json-stringify. The bytes must be the same
// either way, for every value a reading may hold: shortest round-trip digits, -0 as 0, and the
// values float8out writes in exponent notation where JSON.stringify does not (below 1e-4, from
// 1e15 on), for which the page falls back to rows. In both storage profiles.
import t from 'tap';
import { RAW_PAGE_SQL } from '../../src/sensors/history.js';
import { serializeSensorRecords } from '../../src/sensors/serializer.js';
import { createTestApp } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { createProfileDatabase, CSV_HEADER, eachProfile, loadReadings, NOW } from '../helpers/sensor-world.js';
import { issueToken } from '../helpers/tokens.js';

// values JSON.stringify and float8out write alike, on one day
const USUAL = [
  0,
  -0,
  0.0001,
  -0.0001234,
  0.1,
  0.30000000000000004,
  -12.345678901234567,
  99.99,
  1 / 3,
  2 / 3,
  123456789012345.6,
  -999999999999999.9,
  21.5,
  1e-4 * 7,
  4.35,
  100,
  -40,
];
// values they write differently (5e-5 / 0.00005, 1e+15 / 1000000000000000), on the next day
const UNUSUAL = [0.00005, -1.5e-7, 1e15, 1.7976931348623157e308, 5e-324, 21.25];
const unusual = (value: number) => value !== 0 && !(Math.abs(value) >= 1e-4 && Math.abs(value) < 1e15);
const humidityOf = (value: number) => Math.abs(value) % 100;
const unusualCount = (values: number[]) => values.filter(unusual).length + values.map(humidityOf).filter(unusual).length;

function csv(unitId: number, day: string, values: number[]): string {
  // a reading every minute, both types, one on a microsecond: timestamps with and without fraction
  return values
    .flatMap((value, i) => {
      const at = new Date(Date.parse(`${day}T00:00:00Z`) + i * 60_000);
      const stamp = i === 3 ? at.toISOString().replace('.000Z', '.000123Z') : at.toISOString();
      return [`${unitId},TEMPERATURE,${stamp},${Object.is(value, -0) ? '-0' : value}`, `${unitId},HUMIDITY,${stamp},${humidityOf(value)}`];
    })
    .join('\n');
}

eachProfile(t, async (t, profile) => {
  const db = await createProfileDatabase(t, profile);
  const ctx = await createTestApp(t, {}, { database: db });
  ctx.clock.set(NOW);
  const company = await createCompany(db.pool, 'Digits Co');
  const unitId = company.unitIds[0]!;
  const { headers } = await issueToken(ctx, company.employeeId, { scopes: ['sensor_data'] });
  const text = `${CSV_HEADER}\n${csv(unitId, '2026-03-01', USUAL)}\n${csv(unitId, '2026-03-02', UNUSUAL)}\n`;
  t.match(await loadReadings(db, text, () => NOW), { inserted: 2 * (USUAL.length + UNUSUAL.length) });

  for (const [day, values, path] of [
    ['2026-03-01', USUAL, 'PostgreSQL'],
    ['2026-03-02', UNUSUAL, 'rows'],
  ] as const) {
    const params = [
      [unitId],
      ['TEMPERATURE', 'HUMIDITY'],
      `${day}T00:00:00Z`,
      new Date(Date.parse(day) + 86_400_000).toISOString(),
      null,
      null,
      null,
      0,
      1000,
    ];
    // the page as the rows path writes it: the reference bytes
    const { rows } = await db.pool.query(RAW_PAGE_SQL.rows, params);
    t.equal(rows.length, 2 * values.length, `${day}: every reading`);
    const expected = serializeSensorRecords(rows);
    const {
      rows: [written],
    } = await db.pool.query(RAW_PAGE_SQL.json, params);
    if (path === 'PostgreSQL') {
      t.equal(unusualCount(values), 0, `${day}: the premise, every value usual`);
      t.equal(written.unusual_values, 0, `${day}: no value needs the rows path`);
      t.equal(`[${written.body}]`, expected, `${day}: PostgreSQL writes the bytes fast-json-stringify writes`);
    } else {
      t.ok(unusualCount(values) > 0, `${day}: the premise, some values unusual`);
      t.equal(written.unusual_values, unusualCount(values), `${day}: the values float8out would write in exponent notation are found`);
    }

    // through the API, whichever way the page was written
    const response = await ctx.app.inject({
      method: 'GET',
      url: `/api/v1/sensor-data?cooling_unit_id=${unitId}&start_date=${day}&end_date=${day}&page_size=1000`,
      headers,
    });
    t.equal(response.statusCode, 200);
    const body = response.body;
    t.equal(body.slice(0, body.indexOf(',"meta":')), `{"data":${expected}`, `${day} (${path}): the response's data, byte for byte`);
    t.same(
      response
        .json()
        .data.map((record: { value: number }) => record.value)
        .filter((_: unknown, i: number) => i % 2 === 1),
      values.map((value) => (Object.is(value, -0) ? 0 : value)),
      `${day}: every value read back exactly`,
    );
    t.match(response.json().meta.pagination, { total_count: 2 * values.length, page: 1 });
  }

  // a page that ends mid-day seeks on from its last record: the next page starts right after it
  const url = (page: number) =>
    `/api/v1/sensor-data?cooling_unit_id=${unitId}&start_date=2026-03-01&end_date=2026-03-01&page_size=5&page=${page}`;
  const pages = [];
  for (let page = 1; page <= 8; page++) pages.push(...(await ctx.app.inject({ method: 'GET', url: url(page), headers })).json().data);
  const whole = (await ctx.app.inject({ method: 'GET', url: `${url(1).replace('page_size=5', 'page_size=1000')}`, headers })).json().data;
  t.same(pages, whole, `${profile}: pages of 5 put together are the day, no record twice or missing`);
});
