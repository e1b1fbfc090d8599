// What the P9 scale curve measures on a store of one size (bench/scale-profile.ts): the probe
// unit's four requests through the real app (routing, token, access control, page placement,
// the SQL of sql/queries/sensor-data.sql, serialization), and the live ingest batch's rate.
import { readingChunks } from '../../src/sensors/generate.js';
import { ingestReadings } from '../../src/sensors/ingest.js';
import { HOUR_MS } from '../../src/time.js';
import { type BenchCompany, type BenchDatabase, csvReadingRuns, startBenchApp } from '../sensor-common.js';
import { median, timed } from './statistics.js';
import {
  DEEP_PAGE,
  INGEST,
  ingestEnd,
  ingestReadingsPerRound,
  LATENCIES,
  type LatencyKey,
  NEWEST_DAY,
  PROBE_UNIT,
  RAW_PAGE_SIZE,
  ROUNDS,
  WARM_ROUNDS,
  YEAR,
} from './scale-plan.js';

interface Probe {
  /** the requests, in order (the hourly year is a walk of pages) */
  urls: string[];
  /** records the requests return together */
  records: number;
}

const year = `cooling_unit_id=${PROBE_UNIT}&start_date=${YEAR.start}&end_date=${YEAR.end}`;
const HOURLY_RECORDS = 365 * 24 * 2;

const PROBES: Record<LatencyKey, Probe> = {
  hourlyYear: {
    urls: Array.from({ length: Math.ceil(HOURLY_RECORDS / 1000) }, (_, i) => `${year}&aggregation=hourly&page_size=1000&page=${i + 1}`),
    records: HOURLY_RECORDS,
  },
  dailyYear: { urls: [`${year}&aggregation=daily&page_size=1000`], records: 365 * 2 },
  page500: { urls: [`${year}&page_size=${RAW_PAGE_SIZE}&page=${DEEP_PAGE}`], records: RAW_PAGE_SIZE },
  newestDay: {
    urls: [`cooling_unit_id=${PROBE_UNIT}&start_date=${NEWEST_DAY}&end_date=${NEWEST_DAY}&page_size=${RAW_PAGE_SIZE}`],
    records: RAW_PAGE_SIZE,
  },
};

/** A store of one size, as the measurements see it; `liveBatches` counts the live batches it took. */
export interface MeasuredStore {
  db: BenchDatabase;
  company: BenchCompany;
  liveBatches: number;
}

export interface Latencies {
  latencyMs: Record<LatencyKey, number>;
  rounds: Record<LatencyKey, number[]>;
}

/**
 * WARM_ROUNDS unmeasured rounds (the pages these requests read are then in memory, as a store in
 * service has its busy history), then ROUNDS rounds of the four, each round in another order;
 * with two stores (a size and the 1M store beside it), each request on one then the other, the
 * order swapped every round, so the machine's noise hits both. Each store has its own app; its
 * clock jumps an hour before each request, so no cached day counts or page boundary help (within
 * the hourly walk, page k + 1 seeks past page k, as for any partner). Timed: the inject call,
 * from the request to the whole body; the bodies are checked afterwards.
 */
export async function measureLatencies(stores: MeasuredStore[]): Promise<Latencies[]> {
  const apps: Awaited<ReturnType<typeof startBenchApp>>[] = [];
  try {
    for (const store of stores) apps.push(await startBenchApp(store.db, store.company));
    const run = async ({ app, clock, headers }: (typeof apps)[number], key: LatencyKey) => {
      clock.jump(HOUR_MS);
      let ms = 0;
      const bodies: string[] = [];
      for (const url of PROBES[key].urls) {
        const { ms: one, result: response } = await timed(() => app.inject({ method: 'GET', url: `/api/v1/sensor-data?${url}`, headers }));
        if (response.statusCode !== 200) throw new Error(`${key}: ${url} answered ${response.statusCode} ${response.body.slice(0, 300)}`);
        ms += one;
        bodies.push(response.body);
      }
      const records = bodies.reduce((sum, body) => sum + (JSON.parse(body) as { data: unknown[] }).data.length, 0);
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

/** 0..count-1, in the other order every other round */
const alternating = (count: number, round: number) => {
  const order = Array.from({ length: count }, (_, i) => i);
  return round % 2 === 0 ? order : order.reverse();
};

/**
 * The live batch, INGEST.rounds times per store (with two, alternating): the next days of a
 * 713-unit fleet after everything the store holds, through the ingest as `npm run ingest` runs it
 * (CSV parsed and validated, binary COPY in batches of 50,000, two at once, aggregates kept), the
 * CSV text made beforehand so its generation is not timed. Each batch lands after the store's
 * previous one, as a store in service grows.
 */
export async function measureIngest(stores: MeasuredStore[], progress: (line: string) => void) {
  const perSecond = stores.map(() => [] as number[]);
  for (let round = 0; round < INGEST.rounds; round++) {
    for (const index of alternating(stores.length, round)) {
      const store = stores[index]!;
      const end = ingestEnd(store.liveBatches);
      const csv = [...readingChunks({ units: INGEST.units, days: INGEST.days, end, seed: 100 + store.liveBatches })];
      const { ms, result } = await timed(() => ingestReadings(store.db.pool, csvReadingRuns(csv, end)));
      if (result.inserted !== ingestReadingsPerRound)
        throw new Error(`live batch: ${result.inserted} of ${ingestReadingsPerRound} readings loaded`);
      store.liveBatches += 1;
      perSecond[index]!.push(ingestReadingsPerRound / (ms / 1000));
      progress(
        `live batch ${round + 1} of ${INGEST.rounds}${stores.length > 1 ? ` into store ${index + 1} of ${stores.length}` : ''}: ` +
          `${ingestReadingsPerRound} readings in ${(ms / 1000).toFixed(2)} s = ${Math.round(perSecond[index]!.at(-1)!)} readings/s`,
      );
    }
  }
  return perSecond.map((rates) => ({ readingsPerRound: ingestReadingsPerRound, perSecond: rates, median: median(rates) }));
}
