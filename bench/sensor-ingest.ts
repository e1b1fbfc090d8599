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
const P6 = { key: 'P6', name: `ingest with aggregates vs plain COPY (target >= ${RATIO_TARGET}x)` };
const RATE = { name: `ingest rate (target >= ${RATE_TARGET} readings/s)` };
const timescale = script.profile === 'timescale';
const title = 'sensor benchmark (c): ingest with aggregates maintained vs plain COPY';

await script.run({ title, label: 'ingest', poolSize: 4, targets: [P6, RATE] }, async (db) => {
  await script.createUnits(db.pool, UNITS);
  const { csv, readings } = script.generatedCsv(UNITS, DAYS, 3);
  // the same chunks or weekly partitions and primary key as sensor_readings, no aggregates on it
  await db.pool.query(`
    CREATE TABLE plain_readings (LIKE sensor_readings INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
      ${timescale ? '' : 'PARTITION BY RANGE (recorded_at)'};
    ALTER TABLE plain_readings ADD PRIMARY KEY (cooling_unit_id, specification_type, recorded_at);`);
  const weeks = timescale
    ? []
    : (
        await db.pool.query<{ target: string; range_start: string; range_end: string }>(
          'SELECT target, range_start::text, range_end::text FROM sensor_prepare_range($1, $2)',
          [new Date(script.END.getTime() - DAYS * 86_400_000).toISOString(), script.END.toISOString()],
        )
      ).rows;
  if (timescale) {
    await db.pool.query(
      `SELECT create_hypertable('plain_readings', by_range('recorded_at', INTERVAL '1 day'), create_default_indexes => false)`,
    );
  }
  for (const week of weeks) {
    await db.pool.query(
      `CREATE TABLE plain_${week.target} PARTITION OF plain_readings FOR VALUES FROM ('${week.range_start}') TO ('${week.range_end}')`,
    );
  }

  const ours = () => script.ingestCsv(db.pool, csv, readings);
  const aggregatesAgree = async () => {
    const { rows } = await db.pool.query<{ raw: string; hourly: string; daily: string }>(`SELECT
      (SELECT count(*) FROM sensor_readings)::text AS raw, (SELECT sum(sample_count) FROM sensor_readings_hourly)::text AS hourly,
      (SELECT sum(sample_count) FROM sensor_readings_daily)::text AS daily`);
    const { raw, hourly, daily } = rows[0]!;
    if (raw !== String(readings) || hourly !== raw || daily !== raw) throw new Error(`aggregates disagree: ${raw} / ${hourly} / ${daily}`);
  };
  const triggers = async (state: 'ENABLE' | 'DISABLE') => {
    for (const table of ['sensor_readings', ...weeks.map((week) => week.target)]) {
      await db.pool.query(`ALTER TABLE ${table} ${state} TRIGGER sensor_rollups_insert`);
    }
  };
  const runs = {
    ours,
    plain: async () => {
      const client = await db.pool.connect();
      const copy =
        'COPY plain_readings (cooling_unit_id, specification_type, recorded_at, value) FROM STDIN WITH (FORMAT csv, HEADER true)';
      try {
        await pipeline(Readable.from(csv), client.query(copyFrom(copy)));
      } finally {
        client.release();
      }
    },
    oursWithout: async () => {
      await triggers('DISABLE');
      try {
        await ours();
      } finally {
        await triggers('ENABLE');
      }
    },
  };
  const variants = timescale ? (['ours', 'plain'] as const) : (['ours', 'plain', 'oursWithout'] as const);
  const times = await script.alternate(ROUNDS, variants, async (which) => {
    await db.pool.query('TRUNCATE sensor_readings, plain_readings');
    await db.pool.query('CHECKPOINT');
    const ms = await script.msOf(runs[which]);
    if (which === 'ours') await aggregatesAgree();
    return ms;
  });
  const ms: Partial<Record<keyof typeof runs, number>> = script.medians(times);
  const rate = (which: keyof typeof runs) => readings / (ms[which]! / 1000);
  const [oursRate, plainRate] = [rate('ours'), rate('plain')];
  const ratio = oursRate / plainRate;
  const without = timescale ? '' : `; without the aggregate triggers ${Math.round(rate('oursWithout'))} readings/s`;
  console.log(`${readings} readings a round (${UNITS} units x ${DAYS} days), median of ${ROUNDS} rounds:`);
  console.log(`  ingest ${Math.round(oursRate)} readings/s, plain COPY ${Math.round(plainRate)} readings/s${without}`);
  return [
    {
      ...P6,
      pass: ratio >= RATIO_TARGET,
      measured: `${fixed(ratio, 2)}x (${Math.round(oursRate)} vs ${Math.round(plainRate)} readings/s)`,
      ratio,
      detail: `median of ${ROUNDS}; ${readings} readings a round; batches of 50,000, binary COPY, two loading at once${without}; ${script.profile} profile`,
    },
    { ...RATE, pass: oursRate >= RATE_TARGET, measured: `${Math.round(oursRate)} readings/s`, detail: `median of ${ROUNDS}` },
  ];
});
