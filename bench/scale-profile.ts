// One storage profile's P9 scale curve (started by bench/scale.ts, one process per profile, as
// kit/sensor-script.ts serves one profile a process). For each size up to --scale-max, in a database
// of its own, dropped once measured (the 1M one is kept to the end, ~0.3 GB, and measured beside
// every larger size):
//   1. the fleet's two years through the real ingest, in time order (kit/scale-store.ts);
//   2. the store's upkeep as it stands at END (kit/sensor-script.ts upkeepAfter: postgres, partitions
//      and closed months of the rollups compacted; timescale, the real policies via run_job with
//      their offsets moved so they act as at END: aggregates refreshed, in the columnstore, and
//      the readings' chunks compressed up to a week before END), then VACUUM ANALYZE;
//   3. bytes on disk; the probe unit's four requests through the app, and the live ingest batch
//      (kit/scale-store.ts), alternating with the 1M store.
// Human lines go to stderr as it goes; the last stdout line is the curve as JSON (kit/scale-plan.ts).
//   node --import tsx bench/scale-profile.ts --profile postgres|timescale [--scale-max 1M|10M|100M]
import { loadavg } from 'node:os';
import { type BenchDatabase, createBenchDatabase, createUnits, profile, upkeepAfter } from './kit/sensor-script.js';
import {
  bytesOnDisk,
  loadFleet,
  type MeasuredStore,
  measureIngest,
  measureLatencies,
  policiesAsOf,
  sampleDisk,
  storeLayout,
} from './kit/scale-store.js';
import {
  DAYS,
  END,
  INGEST,
  ingestReadingsPerRound,
  type ProfileCurve,
  READINGS_PER_UNIT,
  readScaleOptions,
  type StepFigures,
  stepsUpTo,
} from './kit/scale-plan.js';
import { gigabytes } from './kit/statistics.js';

const started = performance.now();
const seconds = (since: number) => (performance.now() - since) / 1000;
const log = (line: string) => console.error(`[scale ${profile} ${seconds(started).toFixed(0).padStart(5)} s] ${line}`);

function maxStep() {
  try {
    return readScaleOptions(process.argv.slice(2)).max;
  } catch (error) {
    console.error((error as Error).message);
    process.exit(2);
  }
}
const steps = stepsUpTo(maxStep());
const curve: ProfileCurve = { profile, note: '', steps: [], wallSeconds: 0, error: null };
// a profile without a server: NOT MEASURED for the whole curve, with the reason (exit 0)
const P9 = [{ key: 'P9', name: 'scale curve' }];
/** the 1M store, kept while larger sizes are measured beside it */
const kept: { smallest: (MeasuredStore & { readings: number }) | null } = { smallest: null };

async function measureStep(step: (typeof steps)[number], isLast: boolean): Promise<StepFigures> {
  const stepStarted = performance.now();
  const loadAtStart = loadavg()[0]!;
  const readings = step.units * READINGS_PER_UNIT;
  const smallest = kept.smallest;
  const db: BenchDatabase = await createBenchDatabase(`scale_${step.label.toLowerCase()}`, 4, P9);
  curve.note = db.note;
  const disk = await sampleDisk(db, smallest ? [smallest.db] : []);
  let keep = false;
  try {
    log(`${step.label}: ${step.units} units x ${DAYS} days = ${readings} readings into ${db.url.replace(/^.*\//, '')}`);
    const company = await createUnits(db.pool, Math.max(step.units, INGEST.units));
    const load = await loadFleet(db.pool, step.units, (line) => log(`${step.label} ${line}; on disk ${gigabytes(disk.latest())}`));
    log(
      `${step.label}: loaded in ${load.seconds.toFixed(0)} s (${Math.round(load.perSecond)} readings/s; the last tenth ${Math.round(load.lastTenthPerSecond)}/s)`,
    );
    const bytesLoaded = await bytesOnDisk(db);
    if (db.profile === 'timescale')
      for (const job of await policiesAsOf(db, END)) log(`${step.label}: policy as of ${END.toISOString().slice(0, 10)}: ${job}`);
    const upkeep = await upkeepAfter(db, END);
    const layout = await storeLayout(db);
    log(`${step.label}: upkeep (${upkeep.steps.join(', ')}; VACUUM ANALYZE) in ${upkeep.seconds.toFixed(0)} s; ${layout}`);
    const bytes = await bytesOnDisk(db);
    log(
      `${step.label}: on disk as loaded ${gigabytes(bytesLoaded.database)}, after upkeep ${gigabytes(bytes.database)} ` +
        `(${((bytes.readings + bytes.aggregates) / readings).toFixed(1)} bytes a reading, aggregates included)`,
    );

    const store: MeasuredStore = { db, company, liveBatches: 0 };
    const stores = smallest ? [store, smallest] : [store];
    const besideReadings = smallest ? smallest.readings + smallest.liveBatches * ingestReadingsPerRound : 0;
    if (smallest) log(`${step.label}: measuring beside the 1M store (now ${besideReadings} readings), alternating`);
    const [own, beside] = await measureLatencies(stores);
    const shown = (figures: typeof own) =>
      Object.entries(figures!.latencyMs)
        .map(([key, ms]) => `${key} ${ms.toFixed(1)} ms`)
        .join(', ');
    log(`${step.label}: latency medians ${shown(own)}${beside ? `; the 1M store beside it: ${shown(beside)}` : ''}`);
    const [ownIngest, besideIngest] = await measureIngest(stores, (line) => log(`${step.label}: ${line}`));
    keep = !smallest && !isLast;
    if (keep) kept.smallest = { ...store, readings };
    const peaks = await disk.stop();
    return {
      label: step.label,
      units: step.units,
      readings,
      load,
      upkeep,
      layout,
      bytesLoaded,
      bytes,
      ...own!,
      ingest: ownIngest!,
      beside: beside && besideIngest ? { readings: besideReadings, ...beside, ingest: besideIngest } : null,
      ...peaks,
      wallSeconds: seconds(stepStarted),
      loadAverage: { start: loadAtStart, end: loadavg()[0]! },
    };
  } finally {
    await disk.stop();
    if (!keep) await db.drop();
  }
}

try {
  for (const [index, step] of steps.entries()) {
    try {
      const figures = await measureStep(step, index === steps.length - 1);
      curve.steps.push(figures);
      log(
        `${step.label}: done in ${figures.wallSeconds.toFixed(0)} s, peak on disk ${gigabytes(figures.peakDatabaseBytes)}` +
          (index === 0 && index < steps.length - 1 ? '; kept, to be measured beside the larger sizes' : '; its database dropped'),
      );
    } catch (error) {
      curve.error = `${step.label}: ${(error as Error).stack ?? String(error)}`;
      log(`failed at ${curve.error}`);
      break;
    }
  }
} finally {
  await kept.smallest?.db.drop();
}
curve.wallSeconds = seconds(started);
console.log(JSON.stringify(curve));
process.exitCode = curve.error ? 1 : 0;
