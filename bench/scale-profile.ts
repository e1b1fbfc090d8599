// One storage profile's P9 curve, a process of its own (bench/scale.ts); the last stdout line is the curve.
//   node --import tsx bench/scale-profile.ts --profile postgres|timescale [--scale-max 1M|10M|100M]
import { loadavg } from 'node:os';
import { readingChunks } from '../src/sensors/generate.js';
import { ingestReadings } from '../src/sensors/ingest.js';
import { DAY_MS, HOUR_MS } from '../src/time.js';
import type { ProfileCurve, ScaleStepRow } from './kit/run-record.js';
import { DAYS, END, LATENCIES, type LatencyKey, READINGS_PER_UNIT, readScaleOptions, stepsUpTo } from './kit/scale-plan.js';
import { bytesOnDisk, loadFleet, policiesAsOf, sampleDisk, storeLayout } from './kit/scale-store.js';
import {
  type BenchCompany,
  type BenchDatabase,
  createBenchDatabase,
  createUnits,
  csvReadingRuns,
  medians,
  profile,
  startBenchApp,
  upkeepAfter,
} from './kit/sensor-script.js';
import { gigabytes, median, ms, timed } from './kit/statistics.js';

// The probes: unit 1 (present at every size, its history as long) in 2025, the year before END.
const YEAR = `cooling_unit_id=1&start_date=2025-01-01&end_date=2025-12-31`;
const HOURLY_RECORDS = 365 * 24 * 2;
const PROBES: Record<LatencyKey, { urls: string[]; records: number }> = {
  // the 18 pages of 1,000 a partner walks
  hourlyYear: {
    urls: Array.from({ length: Math.ceil(HOURLY_RECORDS / 1000) }, (_, i) => `${YEAR}&aggregation=hourly&page_size=1000&page=${i + 1}`),
    records: HOURLY_RECORDS,
  },
  dailyYear: { urls: [`${YEAR}&aggregation=daily&page_size=1000`], records: 365 * 2 },
  page500: { urls: [`${YEAR}&page_size=100&page=500`], records: 100 },
  newestDay: { urls: [`cooling_unit_id=1&start_date=2025-12-31&end_date=2025-12-31&page_size=100`], records: 100 },
};
const WARM_ROUNDS = 2;
const ROUNDS = 21;

/** The live batch, the same at every size: the next days of a 713-unit fleet after END; the rate is the rounds' median. */
const INGEST = { units: 713, days: 2, rounds: 5 };
const INGEST_PER_ROUND = INGEST.units * INGEST.days * 192;

interface MeasuredStore {
  db: BenchDatabase;
  company: BenchCompany;
  liveBatches: number;
}

/** 0..count-1, reversed every other round */
const alternating = (count: number, round: number) => {
  const order = Array.from({ length: count }, (_, i) => i);
  return round % 2 === 0 ? order : order.reverse();
};

/**
 * The probes on each store; with two (a size and the 1M store), request by request in alternation,
 * so the machine's noise hits both. The warm rounds bring the history into memory, as in service.
 * Each app's clock jumps an hour before each probe, so no cached count or page boundary helps.
 */
async function measureLatencies(stores: MeasuredStore[]) {
  const apps: Awaited<ReturnType<typeof startBenchApp>>[] = [];
  try {
    for (const store of stores) apps.push(await startBenchApp(store.db, store.company));
    const keys = LATENCIES.map((latency) => latency.key);
    const rounds = apps.map(() => Object.fromEntries(keys.map((key) => [key, [] as number[]])) as Record<LatencyKey, number[]>);
    for (let round = 0; round < WARM_ROUNDS + ROUNDS; round++) {
      for (const key of keys.map((_, i) => keys[(i + round) % keys.length]!)) {
        for (const index of alternating(apps.length, round)) {
          const { app, clock, headers } = apps[index]!;
          clock.jump(HOUR_MS);
          let ms = 0;
          let records = 0;
          for (const url of PROBES[key].urls) {
            const { ms: one, result } = await timed(() => app.inject({ method: 'GET', url: `/api/v1/sensor-data?${url}`, headers }));
            if (result.statusCode !== 200) throw new Error(`${key}: ${url} answered ${result.statusCode} ${result.body.slice(0, 300)}`);
            ms += one;
            records += (JSON.parse(result.body) as { data: unknown[] }).data.length;
          }
          if (records !== PROBES[key].records) throw new Error(`${key}: ${records} records, expected ${PROBES[key].records}`);
          if (round >= WARM_ROUNDS) rounds[index]![key].push(ms);
        }
      }
    }
    return rounds.map((figures) => medians(figures));
  } finally {
    for (const { app } of apps) await app.close();
  }
}

/** The live batch into each store in turn, after everything it holds, through the ingest (its CSV made untimed): the median rate. */
async function measureIngest(stores: MeasuredStore[], log: (line: string) => void): Promise<number[]> {
  const perSecond = stores.map(() => [] as number[]);
  for (let round = 0; round < INGEST.rounds; round++) {
    for (const index of alternating(stores.length, round)) {
      const store = stores[index]!;
      const end = new Date(END.getTime() + (store.liveBatches + 1) * INGEST.days * DAY_MS);
      const csv = [...readingChunks({ units: INGEST.units, days: INGEST.days, end, seed: 100 + store.liveBatches })];
      const { ms, result } = await timed(() => ingestReadings(store.db.pool, csvReadingRuns(csv, end)));
      if (result.inserted !== INGEST_PER_ROUND) throw new Error(`live batch: ${result.inserted} of ${INGEST_PER_ROUND} readings loaded`);
      store.liveBatches += 1;
      perSecond[index]!.push(INGEST_PER_ROUND / (ms / 1000));
      log(`live batch ${round + 1} of ${INGEST.rounds} into store ${index + 1}: ${Math.round(perSecond[index]!.at(-1)!)} readings/s`);
    }
  }
  return perSecond.map((rates) => median(rates));
}

const started = performance.now();
const seconds = (since: number) => (performance.now() - since) / 1000;
const log = (line: string) => console.error(`[scale ${profile} ${seconds(started).toFixed(0).padStart(5)} s] ${line}`);

const steps = stepsUpTo(readScaleOptions(process.argv.slice(2)).max);
const curve: ProfileCurve = { profile, note: '', steps: [], peakFileSystemGrowthBytes: null, wallSeconds: 0, error: null };
/** the 1M store, kept while the larger sizes are measured beside it */
let smallest: (MeasuredStore & { readings: number }) | null = null;

/** A size in a database of its own: loaded, kept up as at END, then probed and fed beside the 1M store. */
async function measureStep(step: (typeof steps)[number], isLast: boolean): Promise<ScaleStepRow> {
  const stepStarted = performance.now();
  const loadAtStart = loadavg()[0]!;
  const readings = step.units * READINGS_PER_UNIT;
  const say = (line: string) => log(`${step.label}: ${line}`);
  const db = await createBenchDatabase(`scale_${step.label.toLowerCase()}`, 4, [{ key: 'P9', name: 'scale curve' }]);
  curve.note = db.note;
  const beside = smallest;
  const disk = await sampleDisk(db, beside ? [beside.db] : []);
  try {
    say(`${step.units} units x ${DAYS} days = ${readings} readings`);
    const company = await createUnits(db.pool, Math.max(step.units, INGEST.units));
    const load = await loadFleet(db.pool, step.units, (line) => say(`${line}; on disk ${gigabytes(disk.latest())}`));
    say(`loaded in ${load.seconds.toFixed(0)} s (${Math.round(load.perSecond)} readings/s)`);
    const bytesLoaded = await bytesOnDisk(db);
    if (db.profile === 'timescale') for (const job of await policiesAsOf(db, END)) say(`policy as of END: ${job}`);
    const upkeep = await upkeepAfter(db, END);
    const layout = await storeLayout(db);
    const bytes = await bytesOnDisk(db);
    say(`upkeep (${upkeep.steps.join(', ')}) in ${upkeep.seconds.toFixed(0)} s; ${layout}`);
    say(`on disk as loaded ${gigabytes(bytesLoaded.database)}, after the upkeep ${gigabytes(bytes.database)}`);

    const store: MeasuredStore = { db, company, liveBatches: 0 };
    const stores = beside ? [store, beside] : [store];
    const besideReadings = beside ? beside.readings + beside.liveBatches * INGEST_PER_ROUND : 0;
    const [own, besideLatencies] = await measureLatencies(stores);
    const shown = (figures: typeof own) => LATENCIES.map(({ key }) => `${key} ${ms(figures![key])} ms`).join(', ');
    say(`latency medians ${shown(own)}${besideLatencies ? `; the 1M store beside it: ${shown(besideLatencies)}` : ''}`);
    const [ingest, besideIngest] = await measureIngest(stores, say);
    const peaks = await disk.stop();
    if (!beside && !isLast) smallest = { ...store, readings };
    const growth = peaks.peakFileSystemGrowthBytes;
    if (growth !== null) curve.peakFileSystemGrowthBytes = Math.max(curve.peakFileSystemGrowthBytes ?? 0, growth);
    return {
      label: step.label,
      readings,
      latencyMs: own!,
      ingestPerS: ingest!,
      bytesPerReading: (bytes.readings + bytes.aggregates) / readings,
      databaseBytesPerReading: bytes.database / readings,
      loadPerS: load.perSecond,
      upkeepS: upkeep.seconds,
      peakDatabaseBytes: peaks.peakDatabaseBytes,
      wallS: seconds(stepStarted),
      loadAverage: { start: loadAtStart, end: loadavg()[0]! },
      beside: besideLatencies ? { readings: besideReadings, latencyMs: besideLatencies, ingestPerS: besideIngest! } : null,
    };
  } finally {
    await disk.stop();
    if (smallest?.db !== db) await db.drop();
  }
}

try {
  for (const [index, step] of steps.entries()) {
    try {
      const figures = await measureStep(step, index === steps.length - 1);
      curve.steps.push(figures);
      log(`${step.label}: done in ${figures.wallS!.toFixed(0)} s, peak on disk ${gigabytes(figures.peakDatabaseBytes!)}`);
    } catch (error) {
      curve.error = `${step.label}: ${(error as Error).stack ?? String(error)}`;
      log(`failed at ${curve.error}`);
      break;
    }
  }
} finally {
  await (smallest as MeasuredStore | null)?.db.drop();
}
curve.wallSeconds = seconds(started);
console.log(JSON.stringify(curve));
process.exitCode = curve.error ? 1 : 0;
