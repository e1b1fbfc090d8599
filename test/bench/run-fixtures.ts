// Run records as the bench kit assembles them, small and made up, for the record and renderer
// tests: scenarios summarized and targets judged by the kit's own code (results.ts, targets.ts,
// bench/scale.ts), so a record is built from what a run really hands over.
import * as hdr from 'hdr-histogram-js';
import { LATENCY_US } from '../../bench/kit/histograms.js';
import type { CommitFacts } from '../../bench/kit/checkout.js';
import { type ScenarioResult, type ServerRun, summarize } from '../../bench/kit/results.js';
import type { LoadRecord, ScaleRecord, ScaleStepRow } from '../../bench/kit/run-record.js';
import { loadRecordOf, type RunOutcome } from '../../bench/kit/run-report.js';
import { type ProfileOutcome, scaleRecordOf } from '../../bench/scale.js';
import type { LatencyKey, StepLabel } from '../../bench/kit/scale-plan.js';
import type { ScriptOutcome, SensorScriptResults } from '../../bench/kit/sensor-targets.js';

/**
 * A run's latency histogram as the generator hands it over (microseconds, compressed base64): `count` answers, 98 %
 * of them at p50 ms and 2 % at p99 ms, so its p50 is p50 and its p97.5 and p99 are p99.
 */
export function latencyHistogram(p50: number, p99: number, count = 1000): string {
  const histogram = hdr.build(LATENCY_US);
  histogram.recordValueWithCount(p50 * 1000, Math.round(count * 0.98));
  histogram.recordValueWithCount(p99 * 1000, count - Math.round(count * 0.98));
  const encoded = hdr.encodeIntoCompressedBase64(histogram);
  histogram.destroy();
  return encoded;
}

const figures = (okPerS: number, p50: number, p99: number) => ({
  durationS: 15,
  latencyHistogram: latencyHistogram(p50, p99),
  responses: okPerS * 15,
  reqPerS: okPerS,
  okPerS,
  peakPerS: okPerS,
  latencyMs: { mean: p50, p50, p97_5: p99, p99, max: p99 * 2 },
  errors: 0,
  timeouts: 0,
  non2xx: 0,
  statusCodes: { '200': okPerS * 15 },
  mbPerS: 1,
});

function serverRun(
  server: 'project' | 'reference',
  position: number,
  loads: [string, number, number, number][],
  peakMb: number,
): ServerRun {
  return {
    server,
    position,
    loads: loads.map(([label, okPerS, p50, p99], phase) => ({
      phase,
      label,
      connections: 8,
      overallRate: null,
      requestsInList: 100,
      figures: figures(okPerS, p50, p99),
    })),
    memory: [
      { pid: 1, maxRssMb: peakMb - 5, fileMbAtMaxRss: 61, peakMb, peakOfRun: true },
      { pid: 2, maxRssMb: peakMb - 9, fileMbAtMaxRss: 58, peakMb: peakMb - 4, peakOfRun: true },
    ],
    loop: null,
  };
}

function scenario(
  id: string,
  project: [string, number, number, number][],
  reference: [string, number, number, number][] | null,
  peakMb = 150,
): ScenarioResult {
  const runs = [serverRun('project', 0, project, peakMb), ...(reference ? [serverRun('reference', 1, reference, 90)] : [])];
  return {
    id,
    status: 'measured',
    reason: null,
    runs,
    summary: { project: summarize(runs, 'project'), ...(reference ? { reference: summarize(runs, 'reference') } : {}) },
  };
}

const outcome = (status: ScriptOutcome['status'], measured: string, ratio: number | null, detail = ''): ScriptOutcome => ({
  status,
  measured,
  ratio,
  detail,
  source: 'bench/sensor-x.ts',
});

/** The scripts on both profiles: all pass on postgres; timescale had no server. */
export const sensorScripts: SensorScriptResults = {
  profiles: {
    postgres: { server: 'postgres://postgres@127.0.0.1:5432/postgres', reason: null },
    timescale: { server: null, reason: 'no TimescaleDB found' },
  },
  outcomes: {
    P2: {
      postgres: outcome('pass', '2.40x (600.0 vs 250.0 pages/s)', 2.4),
      timescale: outcome('not measured', '', null, 'not measured: no TimescaleDB found'),
    },
    P3: {
      postgres: outcome('pass', '1.02x (7.40 ms vs 7.25 ms)', 1.02),
      timescale: outcome('not measured', '', null, 'not measured: no TimescaleDB found'),
    },
    P4: {
      postgres: outcome('pass', '11.2x (13.00 ms vs 145.60 ms)', 11.2),
      timescale: outcome('not measured', '', null, 'not measured: no TimescaleDB found'),
    },
    P6: {
      postgres: outcome('pass', '0.95x (530000 vs 557000 readings/s)', 0.95),
      timescale: outcome('not measured', '', null, 'not measured: no TimescaleDB found'),
    },
    P12: {
      postgres: outcome('pass', "ingest 0.98x, a day's page p50 6.0 ms (ten units 4.0 ms)", 0.98),
      timescale: outcome('not measured', '', null, 'not measured: no TimescaleDB found'),
    },
    P15: {
      postgres: outcome('pass', '283,963 records/s, 0.78x COPY + gzip', 0.78),
      timescale: outcome('not measured', '', null, 'not measured: no TimescaleDB found'),
    },
  },
};

export const clean: CommitFacts = { hash: 'abc1234def5678abc1234def5678abc1234def56', dirty: false, movedTo: null };
const machine = { cpuModel: 'AMD EPYC', cores: 2, memoryGb: 23.5, node: 'v20.20.2', loadAverage: { start: 0.4, end: 1.2 } };

/** A release run's record: small-page misses P1 on p99, sensor-raw passes P2, management measured, sensor-hourly not. */
export function loadRecord(partial: string[] = [], commit = clean): LoadRecord {
  const scenarios: ScenarioResult[] = [
    scenario('small-page', [['revenue page_size 10', 2300, 8, 30]], [['revenue page_size 10', 2400, 7, 20]]),
    scenario('sensor-raw', [['raw page_size 1000', 610, 10, 40]], [['raw page_size 1000', 250, 25, 90]]),
    {
      ...scenario('sensor-hourly', [], null),
      status: 'not measured',
      reason: 'not measured: sensor-data not available',
      runs: [],
      summary: {},
    },
    scenario('management', [['list + create', 1134.4, 10, 50]], [['list + create', 1500, 8, 30]]),
    scenario('large-pages', [['page_size 1000', 7.46, 900, 2400]], [['page_size 1000', 9, 800, 2000]], 243),
  ];
  const outcome: RunOutcome = {
    config: { mode: 'full', seconds: 15, order: ['project', 'reference', 'reference', 'project'] },
    startedAt: new Date('2026-12-01T09:05:42.123Z'),
    loadAtStart: 0.4,
    scenarios,
    revocation: null,
    variants: null,
    sensorScripts,
  };
  return loadRecordOf(outcome, {
    machine: { ...machine, postgres: 'PostgreSQL 15.20', redis: '7.0.15' },
    partial,
    commit,
    finishedAt: new Date('2026-12-01T09:20:46.123Z'),
  });
}

const latency = (hourlyYear: number, dailyYear: number, page500: number, newestDay: number): Record<LatencyKey, number> => ({
  hourlyYear,
  dailyYear,
  page500,
  newestDay,
});
function step(
  label: StepLabel,
  readings: number,
  latencyMs: Record<LatencyKey, number>,
  ingestPerS: number,
  beside: ScaleStepRow['beside'],
): ScaleStepRow {
  return {
    label,
    readings,
    latencyMs,
    ingestPerS,
    bytesPerReading: 135,
    databaseBytesPerReading: 140,
    loadPerS: 1,
    upkeepS: 1,
    peakDatabaseBytes: readings * 140,
    wallS: 1,
    loadAverage: { start: 0.5, end: 0.8 },
    beside,
  };
}

/** A scale curve to 100M: postgres's hourly year misses P9 (1.6x the 1M store beside it); timescale had no server. */
export function scaleRecord(partial: string[] = [], commit = clean): ScaleRecord {
  const besideOf = (l: Record<LatencyKey, number>, rate: number) => ({ readings: 982_464, latencyMs: l, ingestPerS: rate });
  const profiles: ProfileOutcome[] = [
    {
      profile: 'postgres',
      status: 'measured',
      reason: null,
      curve: {
        profile: 'postgres',
        note: '',
        peakFileSystemGrowthBytes: null,
        wallSeconds: 1,
        error: null,
        steps: [
          step('1M', 982_464, latency(180, 7, 6.5, 4.3), 140_000, null),
          step('10M', 9_964_992, latency(150, 6.2, 6.1, 2.9), 250_000, besideOf(latency(175, 7.1, 6.4, 4.3), 141_000)),
          step('100M', 100_070_976, latency(288, 9.6, 9.7, 3.3), 132_000, besideOf(latency(180, 7.2, 6.6, 4.4), 139_000)),
        ],
      },
    },
    { profile: 'timescale', status: 'not measured', reason: 'no TimescaleDB found', curve: null },
  ];
  return scaleRecordOf(profiles, {
    max: '100M',
    startedAt: new Date('2026-12-02T07:00:00.000Z'),
    finishedAt: new Date('2026-12-02T07:30:00.000Z'),
    machine: { ...machine, postgres: null, redis: null, loadAverage: { start: 0.5, end: 0.9 } },
    partial,
    commit,
  });
}
