// One run as one JSON line: what bench/results/runs.jsonl (every run) and bench/history.jsonl
// (the published runs) hold, and what docs/benchmarks.md's tables are rendered from
// (figures-markdown.ts). Built from the run's report (report.ts, scale-report.ts); the line says
// which shape it has (`record`), so a later kit can still read an old history.
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Mode, Server } from './config.js';
import { type CommitFacts, commitOfRun, type MachineOfRun } from './checkout.js';
import type { Report } from './report.js';
import type { LoadSummary } from './results.js';
import { LATENCIES, type LatencyKey, type ProfileCurve, type StepLabel } from './scale-plan.js';
import type { ScaleReport } from './scale-report.js';
import type { SensorProfile } from './sensor-profiles.js';
import type { ScriptOutcome, ScriptTarget } from './sensor-targets.js';

export type Verdict = 'pass' | 'miss' | 'not measured';

export interface MachineFacts {
  cpuModel: string | null;
  cores: number | null;
  memoryGb: number | null;
  node: string | null;
  postgres: string | null;
  redis: string | null;
  /** 1-minute load average at the start and the end: above the core count, something else was busy */
  loadAverage: { start: number; end: number } | null;
}

interface RecordBase {
  record: 1;
  /** the run's start, ISO 8601 */
  date: string;
  durationS: number | null;
  commit: CommitFacts;
  machine: MachineFacts;
  /** why this is not a complete release run (--quick, --only ..., --scale-max 10M, a failed profile); empty for one */
  partial: string[];
  /** set on lines converted from figures published before the bench recorded its runs: from where, and what is missing */
  imported?: string;
}

export interface TargetFigures {
  /** P1..P9 */
  id: string;
  verdict: Verdict;
  /** the figure in words, or why it was not measured */
  figure: string;
  /** the figure compared with the goal, when there is one */
  value: number | null;
  detail: string;
}

export interface LoadRow {
  label: string;
  okPerS: number;
  p50Ms: number | null;
  p99Ms: number | null;
  non2xx: number | null;
  errors: number | null;
}

export interface ServerRow {
  /** in the order they ran: the first is the scenario's headline */
  loads: LoadRow[];
  /** per worker, MB: the kernel's peak (VmHWM) when it could be reset, else the highest sampled */
  peakRssMb: number[] | null;
  loopP99Ms: number | null;
}

export interface ScenarioRow {
  id: string;
  /** null when measured; else why not */
  notMeasured: string | null;
  servers: Partial<Record<Server, ServerRow>>;
}

/** The sensor scripts' outcome per target and storage profile (sensor-targets.ts), servers reduced to their host. */
export interface SensorScriptRows {
  profiles: Record<SensorProfile, { host: string | null; reason: string | null }>;
  outcomes: Record<ScriptTarget, Record<SensorProfile, ScriptOutcome>>;
}

/** `npm run bench`: P1-P8. */
export interface LoadRecord extends RecordBase {
  kind: 'load';
  mode: Mode;
  seconds: number;
  runsPerServer: number;
  targets: TargetFigures[];
  scenarios: ScenarioRow[];
  sensorScripts: SensorScriptRows | null;
}

export interface ScaleStepRow {
  label: StepLabel;
  readings: number | null;
  latencyMs: Record<LatencyKey, number>;
  ingestPerS: number;
  /** the readings and both aggregates with their indexes, after the upkeep, per reading */
  bytesPerReading: number;
}

export interface ScaleProfileRow {
  profile: SensorProfile;
  status: 'measured' | 'not measured' | 'failed';
  reason: string | null;
  steps: ScaleStepRow[];
  /** the largest size against 1M: the 1M store measured beside it, else the 1M step alone */
  ratios: { of: StepLabel; against: 'beside' | 'step'; latency: Record<LatencyKey, number>; ingest: number } | null;
}

/** `npm run bench -- --scale`: P9. */
export interface ScaleRecord extends RecordBase {
  kind: 'scale';
  max: StepLabel;
  profiles: ScaleProfileRow[];
  targets: (TargetFigures & { profile: SensorProfile; measure: LatencyKey | 'ingest' })[];
  peakDatabaseBytes: number | null;
}

/** One sample interval of a soak, as the record keeps it (per worker: in the order of their pids). */
export interface SoakPoint {
  atS: number;
  requests: number;
  p50Ms: number | null;
  p99Ms: number | null;
  status5xx: number;
  rssMb: (number | null)[];
  fds: (number | null)[];
  lagP99Ms: number | null;
  postgres: number | null;
  redis: number | null;
}

/** `npm run bench -- --soak`: P14 (bench/soak.ts, kit/soak-verdict.ts). */
export interface SoakRecord extends RecordBase {
  kind: 'soak';
  minutes: number;
  rate: number;
  profile: SensorProfile;
  /** the first and the last window the verdict compares, minutes */
  windowMinutes: number;
  targets: TargetFigures[];
  checks: { id: string; pass: boolean; figure: string; value: number | null }[];
  series: SoakPoint[];
}

export type RunRecord = LoadRecord | ScaleRecord | SoakRecord;

/** A report's machine as a record keeps it (postgres and redis: what the run knew of them). */
export const machineOf = (machine: MachineOfRun, postgres: string | null, redis: string | null): MachineFacts => ({
  cpuModel: machine.cpuModel,
  cores: machine.cpus,
  memoryGb: Math.round(machine.memoryGb * 10) / 10,
  node: machine.node,
  postgres,
  redis,
  loadAverage: machine.loadAverage,
});

/** a latency to a tenth of a millisecond: the histograms' 3 digits read a bucket's top (30.015 for 30) */
const tenths = (ms: number) => Math.round(ms * 10) / 10;

const loadRow = (label: string, load: LoadSummary): LoadRow => ({
  label,
  okPerS: load.okPerS,
  p50Ms: load.reqPerS > 0 ? tenths(load.latencyMs.p50) : null,
  p99Ms: load.reqPerS > 0 ? tenths(load.latencyMs.p99) : null,
  non2xx: load.non2xx,
  errors: load.errors,
});

const hostOf = (url: string | null) => (url ? new URL(url).host : null);

export function loadRunRecord(report: Report, partial: string[], commit: CommitFacts = commitOfRun()): LoadRecord {
  const scripts = report.sensorScripts ?? null;
  return {
    record: 1,
    kind: 'load',
    date: report.startedAt,
    durationS: report.durationS,
    commit,
    machine: machineOf(report.machine, report.machine.postgres, report.machine.redis),
    partial,
    mode: report.mode,
    seconds: report.seconds,
    runsPerServer: report.runsPerServer,
    targets: report.targets.map((target) => ({
      id: target.key,
      verdict: target.status,
      figure: target.status === 'not measured' ? target.detail.replace(/^not measured: /, '') : target.measured,
      value: target.value,
      detail: target.detail,
    })),
    scenarios: report.scenarios.map((scenario) => {
      const servers: ScenarioRow['servers'] = {};
      for (const server of ['project', 'reference'] as const) {
        const summary = scenario.summary[server];
        if (!summary) continue;
        servers[server] = {
          loads: Object.entries(summary.loads).map(([label, load]) => loadRow(label, load)),
          peakRssMb: summary.peakOfRuns ? summary.peakRssMb : summary.rssMb,
          loopP99Ms: summary.loop?.p99Ms ?? null,
        };
      }
      return { id: scenario.id, notMeasured: scenario.status === 'measured' ? null : (scenario.reason ?? 'not measured'), servers };
    }),
    sensorScripts: scripts && {
      profiles: Object.fromEntries(
        Object.entries(scripts.profiles).map(([profile, where]) => [profile, { host: hostOf(where.server), reason: where.reason }]),
      ) as SensorScriptRows['profiles'],
      outcomes: scripts.outcomes,
    },
  };
}

function scaleProfileRow(
  profile: SensorProfile,
  status: ScaleProfileRow['status'],
  reason: string | null,
  curve: ProfileCurve | null,
): ScaleProfileRow {
  const steps = curve?.steps ?? [];
  const first = steps.find((step) => step.label === '1M');
  const last = steps.at(-1);
  // the same pair judgeTargets (scale-report.ts) takes the P9 ratios from
  const base = last?.beside ?? first;
  const ratios =
    first && last && base && last !== first
      ? {
          of: last.label,
          against: last.beside ? ('beside' as const) : ('step' as const),
          latency: Object.fromEntries(LATENCIES.map(({ key }) => [key, last.latencyMs[key] / base.latencyMs[key]])) as Record<
            LatencyKey,
            number
          >,
          ingest: last.ingest.median / base.ingest.median,
        }
      : null;
  return {
    profile,
    status,
    reason,
    steps: steps.map((step) => ({
      label: step.label,
      readings: step.readings,
      latencyMs: step.latencyMs,
      ingestPerS: step.ingest.median,
      bytesPerReading: (step.bytes.readings + step.bytes.aggregates) / step.readings,
    })),
    ratios,
  };
}

export function scaleRunRecord(report: ScaleReport, partial: string[], commit: CommitFacts = commitOfRun()): ScaleRecord {
  return {
    record: 1,
    kind: 'scale',
    date: report.startedAt,
    durationS: report.durationS,
    commit,
    machine: machineOf(report.machine, null, null),
    partial,
    max: report.max,
    profiles: report.profiles.map((outcome) => scaleProfileRow(outcome.profile, outcome.status, outcome.reason, outcome.curve)),
    targets: report.targets.map((target) => ({
      id: 'P9',
      profile: target.profile,
      measure: target.key,
      verdict: target.status,
      figure: target.measured,
      value: target.ratio,
      detail: target.goal,
    })),
    peakDatabaseBytes: report.peakDatabaseBytes,
  };
}

// The run logs, one JSON line a run: bench/results/runs.jsonl for every run (git-ignored) and
// bench/history.jsonl for the published ones (tracked). Lines are only ever appended; the newest
// line of a kind is the last one. runs.jsonl also holds the loadtests' lines (kind 'loadtest',
// loadtest-report.ts), which are never published.

export function appendRecord(path: string, record: { record: 1; kind: string }): void {
  mkdirSync(dirname(path), { recursive: true });
  appendFileSync(path, `${JSON.stringify(record)}\n`);
}

/** Every line of a log, in order; a line that is not a run record stops it, naming the line. */
export function readRecords(path: string): RunRecord[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .flatMap((line, index) => {
      if (line.trim() === '') return [];
      let parsed: Partial<RunRecord>;
      try {
        parsed = JSON.parse(line) as Partial<RunRecord>;
      } catch (error) {
        throw new Error(`${path}:${index + 1}: not JSON (${(error as Error).message})`, { cause: error });
      }
      if (
        parsed.record !== 1 ||
        (parsed.kind !== 'load' && parsed.kind !== 'scale' && parsed.kind !== 'soak') ||
        typeof parsed.date !== 'string' ||
        !Array.isArray(parsed.targets)
      ) {
        throw new Error(`${path}:${index + 1}: not a run record of this kit (record 1, kind load, scale or soak, a date and targets)`);
      }
      return [parsed as RunRecord];
    });
}

/** The last complete (not partial) line of a kind: what the docs show. */
export function newestComplete<Kind extends RunRecord['kind']>(
  records: RunRecord[],
  kind: Kind,
): Extract<RunRecord, { kind: Kind }> | null {
  const found = records.findLast((record) => record.kind === kind && record.partial.length === 0);
  return (found as Extract<RunRecord, { kind: Kind }> | undefined) ?? null;
}
