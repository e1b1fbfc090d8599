// One storage profile's P9 scale curve (started by bench/scale.ts, one process per profile, as
// kit/sensor-script.ts serves one profile a process). Each size up to --scale-max in a database of
// its own (the 1M one kept and measured beside every larger size): the fleet loaded, the upkeep as
// at END and its bytes (kit/scale-store.ts); then the probes and the live ingest batch. Progress goes
// to stderr; the last stdout line is the curve as JSON (kit/scale-plan.ts ProfileCurve).
//   node --import tsx bench/scale-profile.ts --profile postgres|timescale [--scale-max 1M|10M|100M]
import { loadavg } from 'node:os';
import { readingChunks } from '../src/sensors/generate.js';
import { ingestReadings } from '../src/sensors/ingest.js';
import { DAY_MS, HOUR_MS } from '../src/time.js';
import {
  DAYS,
  END,
  type IngestFigures,
  LATENCIES,
  type LatencyKey,
  type ProfileCurve,
  READINGS_PER_UNIT,
  readScaleOptions,
  type StepFigures,
  stepsUpTo,
} from './kit/scale-plan.js';
import { bytesOnDisk, loadFleet, policiesAsOf, sampleDisk, storeLayout } from './kit/scale-store.js';
import {
  type BenchCompany,
  type BenchDatabase,
  createBenchDatabase,
  createUnits,
  csvReadingRuns,
  profile,
  startBenchApp,
  upkeepAfter,
} from './kit/sensor-script.js';
import { gigabytes, median, timed } from './kit/statistics.js';

// The probes: on unit 1 (present at every size, its history the same length), in 2025, the last 365
// days before END. Two unmeasured rounds, then 21 measured, each request in a rotating order.
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

/**
 * The live ingest batch, the same readings at every size: the next days of a 713-unit fleet
 * (273,792 readings a round), after END, where a store in service takes its new readings. Rounds
 * follow each other in time; the rate is their median.
 */
const INGEST = { units: 713, days: 2, rounds: 5 };
const INGEST_PER_ROUND = INGEST.units * INGEST.days * 192;

/** A store of one size, as the measurements see it; `liveBatches` counts the live batches it took. */
interface MeasuredStore {
  db: BenchDatabase;
  company: BenchCompany;
  liveBatches: number;
}

/** 0..count-1, in the other order every other round */
const alternating = (count: number, round: number) => {
  const order = Array.from({ length: count }, (_, i) => i);
  return round % 2 === 0 ? order : order.reverse();
};

/**
 * The probes on each store (with two, a size and the 1M store beside it: each request on one then
 * the other, the order swapped every round, so the machine's noise hits both). The warm rounds put
 * the pages these requests read in memory, as a store in service has its busy history. Each store
 * has its own app, whose clock jumps an hour before each request, so no cached day counts or page
 * boundary help (within the hourly walk, page k + 1 seeks past page k, as for any partner). Timed:
 * the inject call, from the request to the whole body; the bodies are checked afterwards.
 */
async function measureLatencies(stores: MeasuredStore[]) {
  const apps: Awaited<ReturnType<typeof startBenchApp>>[] = [];
  try {
    for (const store of stores) apps.push(await startBenchApp(store.db, store.company));
    const run = async ({ app, clock, headers }: (typeof apps)[number], key: LatencyKey) => {
      clock.jump(HOUR_MS);
      let ms = 0;
      let records = 0;
      for (const url of PROBES[key].urls) {
        const { ms: one, result: response } = await timed(() => app.inject({ method: 'GET', url: `/api/v1/sensor-data?${url}`, headers }));
        if (response.statusCode !== 200) throw new Error(`${key}: ${url} answered ${response.statusCode} ${response.body.slice(0, 300)}`);
        ms += one;
        records += (JSON.parse(response.body) as { data: unknown[] }).data.length;
      }
      if (records !== PROBES[key].records) throw new Error(`${key}: ${records} records, expected ${PROBES[key].records}`);
      return ms;
    };
    const keys = LATENCIES.map((latency) => latency.key);
    const rounds = apps.map(() => Object.fromEntries(keys.map((key) => [key, [] as number[]])) as Record<LatencyKey, number[]>);
    for (let round = 0; round < WARM_ROUNDS + ROUNDS; round++) {
      for (const key of keys.map((_, i) => keys[(i + round) % keys.length]!)) {
        for (const index of alternating(apps.length, round)) {
          const ms = await run(apps[index]!, key);
          if (round >= WARM_ROUNDS) rounds[index]![key].push(ms);
        }
      }
    }
    return rounds.map((figures) => ({
      latencyMs: Object.fromEntries(keys.map((key) => [key, median(figures[key])])) as Record<LatencyKey, number>,
      rounds: figures,
    }));
  } finally {
    for (const { app } of apps) await app.close();
  }
}

/**
 * The live batch, INGEST.rounds times per store (with two, alternating), each after everything the
 * store holds, through the ingest as `npm run ingest` runs it (CSV parsed and validated, binary COPY
 * in batches of 50,000, two at once, aggregates kept); the CSV text is made beforehand, untimed.
 */
async function measureIngest(stores: MeasuredStore[], progress: (line: string) => void): Promise<IngestFigures[]> {
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
      progress(
        `live batch ${round + 1} of ${INGEST.rounds}${stores.length > 1 ? ` into store ${index + 1} of ${stores.length}` : ''}: ` +
          `${INGEST_PER_ROUND} readings in ${(ms / 1000).toFixed(2)} s = ${Math.round(perSecond[index]!.at(-1)!)} readings/s`,
      );
    }
  }
  return perSecond.map((rates) => ({ readingsPerRound: INGEST_PER_ROUND, perSecond: rates, median: median(rates) }));
}

const started = performance.now();
const seconds = (since: number) => (performance.now() - since) / 1000;
const log = (line: string) => console.error(`[scale ${profile} ${seconds(started).toFixed(0).padStart(5)} s] ${line}`);

let steps: ReturnType<typeof stepsUpTo>;
try {
  steps = stepsUpTo(readScaleOptions(process.argv.slice(2)).max);
} catch (error) {
  console.error((error as Error).message);
  process.exit(2);
}
const curve: ProfileCurve = { profile, note: '', steps: [], wallSeconds: 0, error: null };
/** the 1M store, kept while larger sizes are measured beside it */
let smallest: (MeasuredStore & { readings: number }) | null = null;

async function measureStep(step: (typeof steps)[number], isLast: boolean): Promise<StepFigures> {
  const stepStarted = performance.now();
  const loadAtStart = loadavg()[0]!;
  const readings = step.units * READINGS_PER_UNIT;
  // a profile without a server: NOT MEASURED for the whole curve, with the reason (exit 0)
  const db = await createBenchDatabase(`scale_${step.label.toLowerCase()}`, 4, [{ key: 'P9', name: 'scale curve' }]);
  curve.note = db.note;
  const beside = smallest;
  const disk = await sampleDisk(db, beside ? [beside.db] : []);
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
    const stores = beside ? [store, beside] : [store];
    const besideReadings = beside ? beside.readings + beside.liveBatches * INGEST_PER_ROUND : 0;
    if (beside) log(`${step.label}: measuring beside the 1M store (now ${besideReadings} readings), alternating`);
    const [own, besideLatencies] = await measureLatencies(stores);
    const shown = (figures: typeof own) =>
      Object.entries(figures!.latencyMs)
        .map(([key, ms]) => `${key} ${ms.toFixed(1)} ms`)
        .join(', ');
    log(`${step.label}: latency medians ${shown(own)}${besideLatencies ? `; the 1M store beside it: ${shown(besideLatencies)}` : ''}`);
    const [ownIngest, besideIngest] = await measureIngest(stores, (line) => log(`${step.label}: ${line}`));
    keep = !beside && !isLast;
    if (keep) smallest = { ...store, readings };
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
      beside: besideLatencies && besideIngest ? { readings: besideReadings, ...besideLatencies, ingest: besideIngest } : null,
      ...(await disk.stop()),
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
  await (smallest as MeasuredStore | null)?.db.drop();
}
curve.wallSeconds = seconds(started);
console.log(JSON.stringify(curve));
process.exitCode = curve.error ? 1 : 0;
