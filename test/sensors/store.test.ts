// The sensor store in both storage profiles (test/helpers/sensor-world.ts): the hourly and daily
// aggregates agree with the readings, late readings land in them and duplicates never count
// twice, and the store's upkeep leaves them exact.
import t from 'tap';
import { compactAggregates, maintainStore } from '../../src/sensors/store.js';
import { createSensorWorld, eachProfile } from '../helpers/sensor-world.js';

eachProfile(t, async (t, profile) => {
  const { db, a1, a2, generated, get, one, load, expired, consistent } = await createSensorWorld(t, profile);

  await t.test('the aggregates agree with the readings', async (t) => {
    await consistent(t, 'after loading');
    const hour = await one<{ value: number; min: number; max: number; sample_count: number }>(
      `
      SELECT value, min, max, sample_count FROM sensor_readings_hourly
      WHERE cooling_unit_id = $1 AND specification_type = 'TEMPERATURE' AND bucket = '2026-03-10T13:00:00Z'`,
      [a1],
    );
    const raw = await one<{ value: number; min: number; max: number; n: number }>(
      `
      SELECT avg(value) AS value, min(value) AS min, max(value) AS max, count(*)::int AS n FROM sensor_readings
      WHERE cooling_unit_id = $1 AND specification_type = 'TEMPERATURE'
        AND recorded_at >= '2026-03-10T13:00:00Z' AND recorded_at < '2026-03-10T14:00:00Z'`,
      [a1],
    );
    t.equal(hour.sample_count, 4, 'four readings an hour');
    t.ok(Math.abs(hour.value - raw.value) < 1e-9, 'hourly value is the mean');
    t.same([hour.min, hour.max, hour.sample_count], [raw.min, raw.max, raw.n], 'hourly min, max, sample_count');
  });

  await t.test('late readings land in the aggregates, duplicates never count twice', async (t) => {
    const hourOf = () =>
      one<{ value: number; sample_count: number }>(
        `
      SELECT value, sample_count FROM sensor_readings_hourly
      WHERE cooling_unit_id = $1 AND specification_type = 'HUMIDITY' AND bucket = '2026-03-06T10:00:00Z'`,
        [a1],
      );
    const dayOf = () =>
      one<{ sample_count: number }>(
        `SELECT sample_count FROM sensor_readings_daily
      WHERE cooling_unit_id = $1 AND specification_type = 'HUMIDITY' AND bucket = '2026-03-06T00:00:00Z'`,
        [a1],
      );
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

  await t.test("the store's upkeep keeps the aggregates exact", async (t) => {
    const before = await get(`aggregation=hourly&cooling_unit_id=${a1}&start_date=2026-03-05&end_date=2026-03-15&page_size=1000`);
    // April 10th: March is closed (postgres profile: its aggregate tables compacted; timescale: nothing to do)
    await maintainStore(db.pool, new Date('2026-04-10T00:00:00Z'));
    t.equal(await compactAggregates(db.pool, new Date('2026-04-10T00:00:00Z')), profile === 'postgres' ? 1 : 0);
    await consistent(t, 'after compaction');
    expired();
    const after = await get(`aggregation=hourly&cooling_unit_id=${a1}&start_date=2026-03-05&end_date=2026-03-15&page_size=1000`);
    t.same(after.body, before.body, 'the same history');
    await load(`cooling_unit_id,specification_type,recorded_at,value\n${a2},TEMPERATURE,2026-03-07T08:09:00Z,4\n`);
    await consistent(t, 'a late reading into a compacted month');
  });
});
