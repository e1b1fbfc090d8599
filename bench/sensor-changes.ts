// Benchmark P12, the change feed: 1. the ingest with change tracking >= 0.95x the same with
// sensor_changes_record emptied, alternating; 2. a day of changes among the days kept, walked by a
// company-wide reader (and a page for ten units), p50 a page of 1,000 <= 50 ms, query and cursor
// without HTTP. --readings puts the P9 fleet's readings under part 2 (docs/benchmarks.md).
//   node --import tsx bench/sensor-changes.ts [--quick] [--profile postgres|timescale] [--readings 1M|10M|100M]
import { encodeCursor } from '../src/sensors/change-cursor.js';
import { createChangeFeed } from '../src/sensors/changes.js';
import * as script from './kit/sensor-script.js';
import { fixed, gigabytes, median, timed } from './kit/statistics.js';
import { isStepLabel, READINGS_PER_UNIT, SCALE_STEPS } from './kit/scale-plan.js';
import { loadFleet, policiesAsOf, storeLayout } from './kit/scale-store.js';

const INGEST_UNITS = script.quick ? 50 : 200;
const INGEST_DAYS = script.quick ? 4 : 14;
const ROUNDS = script.quick ? 2 : 3;
const FEED_UNITS = script.quick ? 200 : 2000;
const DAYS_KEPT = script.quick ? 3 : 30;
const WALKS = script.quick ? 3 : 10;
const RATIO_TARGET = 0.95;
const P50_TARGET_MS = 50;
const fleet = SCALE_STEPS.find((step) => step.label === script.args.readings) ?? null;
if (script.args.readings !== undefined && !isStepLabel(script.args.readings)) {
  console.error(`--readings takes ${SCALE_STEPS.map((step) => step.label).join(', ')}, not ${script.args.readings || 'nothing'}`);
  process.exit(2);
}
const P12 = {
  key: 'P12',
  name: `the change feed: ingest with change tracking vs without (target >= ${RATIO_TARGET}x), a day's changes p50 a page (target <= ${P50_TARGET_MS} ms)`,
};

await script.run({ label: 'changes', targets: [P12] }, async (db) => {
  const company = await script.createUnits(db.pool, Math.max(INGEST_UNITS, FEED_UNITS));
  const { rows } = await db.pool.query<{ body: string }>(
    `SELECT pg_get_functiondef('sensor_changes_record(integer[], specification_type[], timestamptz[], timestamptz[], integer[])'::regprocedure) AS body`,
  );
  const tracking = rows[0]!.body;
  const noTracking = tracking.replace(/BEGIN[\s\S]*END/, 'BEGIN\nEND');

  // 1. the ingest, with and without recording the changes
  const { csv, readings } = script.generatedCsv(INGEST_UNITS, INGEST_DAYS, 5);
  const times = await script.alternate(ROUNDS, ['with', 'without'] as const, async (variant) => {
    await db.pool.query('TRUNCATE sensor_readings, sensor_changes');
    await db.pool.query(variant === 'with' ? tracking : noTracking);
    return script.msOf(() => script.ingestCsv(db.pool, csv, readings));
  });
  await db.pool.query(tracking);
  const [withRate, withoutRate] = [times.with, times.without].map((ms) => readings / (median(ms) / 1000)) as [number, number];
  const ratio = withRate / withoutRate;

  // 2. the feed: DAYS_KEPT days of hourly loads, the last one the day a partner asks for
  let store = 'no readings kept';
  await db.pool.query('TRUNCATE sensor_changes');
  if (fleet) {
    const started = performance.now();
    const log = (line: string) => console.error(`[P12 ${((performance.now() - started) / 1000).toFixed(0).padStart(5)} s] ${line}`);
    await db.pool.query('TRUNCATE sensor_readings');
    const load = await loadFleet(db.pool, fleet.units, log);
    log(`loaded ${fleet.units * READINGS_PER_UNIT} readings in ${load.seconds.toFixed(0)} s`);
    if (db.profile === 'timescale')
      for (const job of await policiesAsOf(db, script.END)) log(`policy as of ${script.END.toISOString().slice(0, 10)}: ${job}`);
    const upkeep = await script.upkeepAfter(db, script.END);
    log(`upkeep (${upkeep.steps.join(', ')}) in ${upkeep.seconds.toFixed(0)} s; ${await storeLayout(db)}`);
    const { rows: sizes } = await db.pool.query<{ readings: string; changes: string; bytes: string }>(
      `SELECT (SELECT count(*) FROM sensor_readings)::text AS readings, (SELECT count(*) FROM sensor_changes)::text AS changes,
              pg_database_size(current_database())::text AS bytes`,
    );
    store = `${sizes[0]!.readings} readings (the P9 ${fleet.label} fleet) and the ${sizes[0]!.changes} changes their load recorded, ${gigabytes(Number(sizes[0]!.bytes))} on disk`;
  }
  const dayStart = new Date(script.END.getTime() - 86_400_000);
  for (let day = DAYS_KEPT; day >= 1; day--) {
    await db.pool.query(
      `INSERT INTO sensor_changes (cooling_unit_id, specification_type, first_at, last_at, readings, landed_at)
       SELECT u, kind, h, h + interval '45 minutes', 4, h + interval '1 hour'
       FROM generate_series($1::timestamptz, $1::timestamptz + interval '23 hours', interval '1 hour') h,
            generate_series(1, $2::int) u, unnest(ARRAY['TEMPERATURE', 'HUMIDITY']::specification_type[]) kind
       ORDER BY h, u, kind`,
      [new Date(script.END.getTime() - day * 86_400_000).toISOString(), FEED_UNITS],
    );
  }
  await db.pool.query('ANALYZE sensor_changes');
  const perDay = FEED_UNITS * 2 * 24;
  const feed = createChangeFeed(db.pool);
  const everyUnit = company.unitIds.slice(0, FEED_UNITS);
  const tenUnits = everyUnit.filter((_, i) => i % Math.floor(FEED_UNITS / 10) === 0).slice(0, 10);
  // the cursor at the day's start: after the last change of the day before
  const { rows: before } = await db.pool.query<{ id: string }>('SELECT max(id)::text AS id FROM sensor_changes WHERE first_at < $1', [
    dayStart.toISOString(),
  ]);
  const { rows: keyRows } = await db.pool.query<{ cursor_key: Buffer }>('SELECT cursor_key FROM sensor_changes_state');
  const start = encodeCursor(keyRows[0]!.cursor_key, company.companyId, BigInt(before[0]!.id));
  const pageTimes: number[] = [];
  const narrowTimes: number[] = [];
  let changes = 0;
  for (let walk = 0; walk < WALKS; walk++) {
    let cursor = start;
    changes = 0;
    for (;;) {
      const { ms, result } = await timed(() => feed.page(company.companyId, everyUnit, cursor, 1000));
      pageTimes.push(ms);
      changes += result.changes.length;
      cursor = result.nextCursor;
      if (!result.hasNext) break;
    }
    narrowTimes.push((await timed(() => feed.page(company.companyId, tenUnits, start, 1000))).ms);
  }
  if (changes !== perDay) throw new Error(`the walk found ${changes} changes, not the day's ${perDay}`);
  const p50 = median(pageTimes);
  const narrowP50 = median(narrowTimes);
  return [
    {
      ...P12,
      pass: ratio >= RATIO_TARGET && Math.max(p50, narrowP50) <= P50_TARGET_MS,
      measured: `ingest ${fixed(ratio, 3)}x, a day's page p50 ${fixed(p50, 1)} ms (ten units ${fixed(narrowP50, 1)} ms)`,
      ratio,
      detail:
        `ingest ${Math.round(withRate)} vs ${Math.round(withoutRate)} readings/s, ${readings} readings a round, batches of 50,000, median of ${ROUNDS}; ` +
        `${WALKS} walks of a day of ${perDay} changes (${FEED_UNITS} units x 2 types x 24 loads) among ${DAYS_KEPT * perDay} (${DAYS_KEPT} days kept); ${store}; query and cursor, no HTTP; ${script.profile} profile`,
    },
  ];
});
