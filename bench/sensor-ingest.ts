// Benchmark (c), P6: readings a second through the ingest, aggregates maintained, >= 100,000 and
// >= 0.6x a plain COPY of the same CSV into a table without aggregates; empty tables each round,
// rounds alternating. postgres also times the ingest with the aggregate triggers off.
//   node --import tsx bench/sensor-ingest.ts [--quick] [--profile postgres|timescale]
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import * as script from './kit/sensor-script.js';
import { fixed } from './kit/statistics.js';

const UNITS = script.quick ? 100 : 200;
const DAYS = script.quick ? 8 : 14;
const ROUNDS = script.quick ? 2 : 3;
const RATE_TARGET = 100_000;
const RATIO_TARGET = 0.6;
const P6 = { key: 'P6', name: `ingest with aggregates (target >= ${RATE_TARGET} readings/s and >= ${RATIO_TARGET}x plain COPY)` };
const timescale = script.profile === 'timescale';
await script.run({ label: 'ingest', targets: [P6] }, async ({ pool }) => {
  await script.createUnits(pool, UNITS);
  const { csv, readings } = script.generatedCsv(UNITS, DAYS, 3);
  // the same weekly partitions (or daily chunks) and primary key as sensor_readings, no aggregates
  await pool.query(`
    CREATE TABLE plain_readings (LIKE sensor_readings INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
      ${timescale ? '' : 'PARTITION BY RANGE (recorded_at)'};
    ALTER TABLE plain_readings ADD PRIMARY KEY (cooling_unit_id, specification_type, recorded_at);`);
  let weeks: { target: string; range_start: string; range_end: string }[] = [];
  if (timescale) {
    await pool.query(
      `SELECT create_hypertable('plain_readings', by_range('recorded_at', INTERVAL '1 day'), create_default_indexes => false)`,
    );
  } else {
    const from = new Date(script.END.getTime() - DAYS * 86_400_000);
    weeks = (await pool.query('SELECT target, range_start::text, range_end::text FROM sensor_prepare_range($1, $2)', [from, script.END]))
      .rows;
    for (const week of weeks) {
      await pool.query(
        `CREATE TABLE plain_${week.target} PARTITION OF plain_readings FOR VALUES FROM ('${week.range_start}') TO ('${week.range_end}')`,
      );
    }
  }
  // each partition carries its own trigger (sensor_prepare_range)
  const triggers = async (state: 'ENABLE' | 'DISABLE') => {
    for (const table of ['sensor_readings', ...weeks.map((week) => week.target)]) {
      await pool.query(`ALTER TABLE ${table} ${state} TRIGGER sensor_rollups_insert`);
    }
  };
  const runs = {
    ours: () => script.ingestCsv(pool, csv, readings),
    plain: async () => {
      const client = await pool.connect();
      const copy =
        'COPY plain_readings (cooling_unit_id, specification_type, recorded_at, value) FROM STDIN WITH (FORMAT csv, HEADER true)';
      await pipeline(Readable.from(csv), client.query(copyFrom(copy))).finally(() => client.release());
    },
    oursWithout: async () => {
      await triggers('DISABLE');
      await script.ingestCsv(pool, csv, readings).finally(() => triggers('ENABLE'));
    },
  };
  const times = await script.alternate(
    ROUNDS,
    timescale ? (['ours', 'plain'] as const) : (['ours', 'plain', 'oursWithout'] as const),
    async (which) => {
      await pool.query('TRUNCATE sensor_readings, plain_readings');
      await pool.query('CHECKPOINT');
      const ms = await script.msOf(runs[which]);
      if (which === 'ours') {
        const { rows } = await pool.query<{ raw: string; hourly: string; daily: string }>(`SELECT
        (SELECT count(*) FROM sensor_readings)::text AS raw, (SELECT sum(sample_count) FROM sensor_readings_hourly)::text AS hourly,
        (SELECT sum(sample_count) FROM sensor_readings_daily)::text AS daily`);
        const { raw, hourly, daily } = rows[0]!;
        if (raw !== String(readings) || hourly !== raw || daily !== raw)
          throw new Error(`aggregates disagree: ${raw} / ${hourly} / ${daily}`);
      }
      return ms;
    },
  );
  const ms = script.medians(times);
  const rate = (which: keyof typeof runs) => readings / (ms[which] / 1000);
  const ratio = rate('ours') / rate('plain');
  const [oursRate, plainRate] = [Math.round(rate('ours')), Math.round(rate('plain'))];
  const without = timescale ? '' : `; without the aggregate triggers ${Math.round(rate('oursWithout'))} readings/s`;
  return [
    {
      ...P6,
      // both halves of the target: a ratio alone would pass a slow machine's slow COPY
      pass: ratio >= RATIO_TARGET && rate('ours') >= RATE_TARGET,
      measured: `${fixed(ratio, 2)}x (${oursRate} vs ${plainRate} readings/s)`,
      ratio,
      detail: `median of ${ROUNDS}; ${readings} readings a round (${UNITS} units x ${DAYS} days); batches of 50,000, binary COPY, two loading at once${without}; ${script.profile} profile`,
    },
  ];
});
