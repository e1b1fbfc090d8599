// Benchmark (c), the kit's P6: readings per second through the ingest (src/sensors/ingest.ts:
// CSV parsed and validated in Node, a binary COPY per batch, two batches loading at once, the
// hourly and daily aggregates maintained by the store) vs a plain COPY of the same CSV into an
// identical partitioned table without the aggregate triggers (PostgreSQL parsing the CSV itself, one
// connection). Same data, empty tables each round, rounds alternating.
// Also shown: the same ingest with the aggregate triggers switched off, which isolates what keeping
// the aggregates costs, and the Node side alone (parse, validate, encode; no database).
// Targets: >= 100,000 readings/s, and >= 0.6x the plain COPY's rate.
// timescale profile: the plain COPY goes into an identical hypertable (1-day chunks, the same
// primary key) without continuous aggregates; what the aggregates cost the ingest is TimescaleDB's
// invalidation log (the materialization is the refresh policies' later work, timed once at the
// end for information). There are no aggregate triggers to switch off.
//   node --import tsx bench/sensor-ingest.ts [--quick] [--profile postgres|timescale]
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { Reading } from '../src/sensors/formats.js';
import { encodeReadings } from '../src/sensors/copy-binary.js';
import { DEFAULT_BATCH_SIZE } from '../src/sensors/ingest.js';
import * as script from './kit/sensor-script.js';
import { fixed } from './kit/statistics.js';

const UNITS = script.quick ? 100 : 200;
const DAYS = script.quick ? 8 : 14; // 100 x 8 x 192 = 153,600; 200 x 14 x 192 = 537,600 readings a round
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
  const from = new Date(script.END.getTime() - DAYS * 86_400_000).toISOString();
  let weeks: { target: string; range_start: string; range_end: string }[] = [];
  if (timescale) {
    // the same hypertable (1-day chunks, primary key), no continuous aggregates on it
    await db.pool.query(`
      CREATE TABLE plain_readings (LIKE sensor_readings INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
      ALTER TABLE plain_readings ADD PRIMARY KEY (cooling_unit_id, specification_type, recorded_at);
      SELECT create_hypertable('plain_readings', by_range('recorded_at', INTERVAL '1 day'), create_default_indexes => false);`);
  } else {
    // the same weekly partitions and primary key, no aggregate triggers
    await db.pool.query(`
      CREATE TABLE plain_readings (LIKE sensor_readings INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (recorded_at);
      ALTER TABLE plain_readings ADD PRIMARY KEY (cooling_unit_id, specification_type, recorded_at);`);
    ({ rows: weeks } = await db.pool.query('SELECT target, range_start::text, range_end::text FROM sensor_prepare_range($1, $2)', [
      from,
      script.END.toISOString(),
    ]));
    for (const week of weeks) {
      await db.pool.query(
        `CREATE TABLE plain_${week.target} PARTITION OF plain_readings FOR VALUES FROM ('${week.range_start}') TO ('${week.range_end}')`,
      );
    }
  }

  const ours = (loadsInFlight?: number) => script.ingestCsv(db.pool, csv, readings, loadsInFlight);
  const aggregatesAgree = async () => {
    const { rows } = await db.pool.query<{ raw: string; hourly: string; daily: string }>(`SELECT
      (SELECT count(*) FROM sensor_readings)::text AS raw, (SELECT sum(sample_count) FROM sensor_readings_hourly)::text AS hourly,
      (SELECT sum(sample_count) FROM sensor_readings_daily)::text AS daily`);
    const { raw, hourly, daily } = rows[0]!;
    if (raw !== String(readings) || hourly !== raw || daily !== raw) throw new Error(`aggregates disagree: ${raw} / ${hourly} / ${daily}`);
  };
  // the ingest itself, with the aggregate triggers switched off: what keeping the aggregates costs
  const triggers = async (state: 'ENABLE' | 'DISABLE') => {
    for (const table of ['sensor_readings', ...weeks.map((week) => week.target)]) {
      await db.pool.query(`ALTER TABLE ${table} ${state} TRIGGER sensor_rollups_insert`);
    }
  };
  const runs = {
    ours: () => ours(),
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
    // the same, one batch at a time: what the parallel loads add (plain COPY has one connection)
    oursSerial: () => ours(1),
    // what the ingest does in Node before any database work, in batches as it does them
    nodeSide: async () => {
      let batch: Reading[] = [];
      for await (const run of script.csvReadingRuns(csv, script.END)) {
        for (const parsed of run) {
          if ('reason' in parsed) throw new Error(`line ${parsed.line}: ${parsed.reason}`);
          batch.push(parsed);
          if (batch.length < DEFAULT_BATCH_SIZE) continue;
          encodeReadings(batch);
          batch = [];
        }
      }
      encodeReadings(batch);
    },
  };
  const empty = async () => {
    await db.pool.query('TRUNCATE sensor_readings, plain_readings');
    await db.pool.query('CHECKPOINT');
  };
  // timescale: no aggregate triggers to switch off; the rounds rotate who goes first
  const variants = (['ours', 'plain', 'oursWithout', 'oursSerial', 'nodeSide'] as const).filter(
    (which) => !timescale || which !== 'oursWithout',
  );
  const times = await script.alternate(ROUNDS, variants, async (which) => {
    if (which !== 'nodeSide') await empty();
    const ms = await script.msOf(runs[which]);
    if (which === 'ours' || which === 'oursSerial') await aggregatesAgree();
    return ms;
  });
  const medians = script.medians(times);
  const seconds = (which: keyof typeof runs) => medians[which] / 1000;
  const rate = (which: keyof typeof runs) => readings / seconds(which);
  const [oursRate, plainRate, nodeRate, serialRate] = [rate('ours'), rate('plain'), rate('nodeSide'), rate('oursSerial')];
  const ratio = oursRate / plainRate;
  const withoutRate = timescale ? NaN : rate('oursWithout');
  // timescale: what the refresh policies then do with the last round's readings (not timed above)
  let refreshSeconds = NaN;
  if (timescale) {
    await empty();
    await ours();
    const client = await script.untimedClient(db);
    try {
      refreshSeconds =
        (await script.msOf(async () => {
          for (const view of ['sensor_readings_hourly', 'sensor_readings_daily']) {
            await client.query(`CALL refresh_continuous_aggregate('${view}', $1::timestamptz, $2::timestamptz)`, [
              from,
              script.END.toISOString(),
            ]);
          }
        })) / 1000;
    } finally {
      await client.end();
    }
  }
  console.log(`${readings} readings a round (${UNITS} units x ${DAYS} days), median of ${ROUNDS} rounds:`);
  console.log(`  ingest (parse, validate, COPY, aggregates): ${fixed(seconds('ours'), 2)} s = ${Math.round(oursRate)} readings/s`);
  console.log(`  plain COPY, no aggregates:               ${fixed(seconds('plain'), 2)} s = ${Math.round(plainRate)} readings/s`);
  if (timescale) {
    console.log(
      `  (then the refresh policies' work, materializing both aggregates over these readings: ${fixed(refreshSeconds, 2)} s = ` +
        `${Math.round(readings / refreshSeconds)} readings/s, in the background)`,
    );
  } else {
    console.log(
      `  the ingest with the aggregate triggers switched off: ${fixed(seconds('oursWithout'), 2)} s = ${Math.round(withoutRate)} readings/s ` +
        `(keeping the aggregates costs ${fixed((1 - oursRate / withoutRate) * 100, 0)}% of the ingest's rate: ${fixed(oursRate / withoutRate, 2)}x)`,
    );
  }
  console.log(
    `  the ingest loading one batch at a time:  ${fixed(seconds('oursSerial'), 2)} s = ${Math.round(serialRate)} readings/s ` +
      `(${fixed(serialRate / plainRate, 2)}x plain COPY)`,
  );
  console.log(
    `  the Node side alone (parse, validate, binary-encode; no database): ${fixed(seconds('nodeSide'), 2)} s = ${Math.round(nodeRate)} readings/s`,
  );
  console.log('  after each ingest round: readings = sum of hourly sample_count = sum of daily sample_count');
  return [
    {
      ...P6,
      pass: ratio >= RATIO_TARGET,
      measured: `${fixed(ratio, 2)}x (${Math.round(oursRate)} vs ${Math.round(plainRate)} readings/s)`,
      ratio,
      detail:
        `median of ${ROUNDS}; ${readings} readings a round; batches of 50,000, binary COPY, two loading at once; ` +
        (timescale
          ? `the aggregates' later refresh of a round ${fixed(refreshSeconds, 2)} s`
          : `the same ingest without the aggregate triggers ${fixed(oursRate / withoutRate, 2)}x`) +
        `; one batch at a time ${fixed(serialRate / plainRate, 2)}x plain COPY; Node side alone ${Math.round(nodeRate)} readings/s; ${script.profile} profile`,
    },
    { ...RATE, pass: oursRate >= RATE_TARGET, measured: `${Math.round(oursRate)} readings/s`, detail: `median of ${ROUNDS}` },
  ];
});
