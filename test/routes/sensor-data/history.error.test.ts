// GET /api/v1/sensor-data, refused and edge-case query strings, in both storage profiles
// (test/helpers/sensor-world.ts): 400 naming the parameter, and the calendar's edges answered as
// ordinary empty windows.
import t from 'tap';
import { createSensorWorld, eachProfile } from '../../helpers/sensor-world.js';

eachProfile(t, async (t, profile) => {
  const { get } = await createSensorWorld(t, profile);

  await t.test('refused parameters: 400 naming the field', async (t) => {
    for (const [query, field] of [
      ['specification_type=PRESSURE', 'specification_type'],
      ['specification_type=', 'specification_type'],
      ['aggregation=weekly', 'aggregation'],
      ['page_size=1001', 'page_size'],
      ['page=0', 'page'],
      ['sort=desc', 'sort'],
      ['period=day', 'period'],
      ['start_date=2025-03-13&end_date=2026-03-14', 'start_date'],
      ['aggregation=hourly&start_date=2025-03-13&end_date=2026-03-14', 'start_date'],
      ['aggregation=daily&start_date=2016-03-01&end_date=2026-03-14', 'start_date'],
      ['end_date=2026-02-30', 'end_date'],
      ['start_date=2026-03-10&end_date=2026-03-09', 'end_date'],
      ['start_date=0000-12-31&end_date=0001-01-01', 'start_date'],
    ] as const) {
      const { status, body } = await get(query);
      t.equal(status, 400, query);
      t.equal(body.error?.code, 'invalid_request', `${query}: code`);
      t.equal(body.error?.details?.field, field, `${query}: field`);
    }
  });

  // the calendar's edges are ordinary empty windows: the end of 9999-12-31 is an instant in the
  // year 10000, and the years 1-99 are not 1901-1999
  await t.test("the calendar's edges are empty windows, not errors", async (t) => {
    for (const aggregation of ['raw', 'hourly', 'daily']) {
      for (const [start, end] of [
        ['9999-12-31', '9999-12-31'],
        ['9999-01-01', '9999-12-31'],
        ['0001-01-01', '0001-12-31'],
        ['0050-03-01', '0050-03-02'],
      ]) {
        const { status, body } = await get(`aggregation=${aggregation}&start_date=${start}&end_date=${end}`);
        t.equal(status, 200, `${aggregation} ${start}..${end}: 200`);
        t.same(body.data, [], `${aggregation} ${start}..${end}: no readings`);
        t.same(
          [body.meta.filters.start_date, body.meta.filters.end_date],
          [start, end],
          `${aggregation} ${start}..${end}: echoed as asked`,
        );
      }
    }
  });
});
