// A run's record: the JSON line a run appends to bench/results/runs.jsonl (published: also to
// bench/history.jsonl), which its printed table and docs/benchmarks.md's tables are rendered from.
// `record` names the shape; a figure a line does not know (the imported lines) is null.
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname } from 'node:path';
import type { Mode, Server } from './config.js';
import { type CommitFacts, commitOfRun } from './checkout.js';
import type { LatencyKey, StepLabel } from './scale-plan.js';
import type { SensorProfile } from './sensor-profiles.js';
import type { ScriptOutcome, ScriptTarget } from './sensor-targets.js';

const RECORD_SHAPE = 2;

export type Verdict = 'pass' | 'miss' | 'not measured';
export const VERDICT_WORDS: Record<Verdict, string> = { pass: 'PASS', miss: 'MISSED', 'not measured': 'NOT MEASURED' };

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
  record: typeof RECORD_SHAPE;
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
  /** P1..P19 (its title and goal: targets.ts) */
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
  /** null: no answer completed within the run */
  p50Ms: number | null;
  p97_5Ms: number | null;
  p99Ms: number | null;
  non2xx: number | null;
  errors: number | null;
  /** the event loop over this load's phases (on the first load of a phase), when sampled */
  loopP99Ms?: number | null;
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
  /** the goal each script was judged against (P4's was ">= 10x" raw bucketing before issue 29) */
  goals: Record<ScriptTarget, string>;
}

/** `npm run bench`: P1-P8, P16, P17, P19. */
export interface LoadRecord extends RecordBase {
  kind: 'load';
  mode: Mode;
  seconds: number;
  runsPerServer: number;
  targets: TargetFigures[];
  scenarios: ScenarioRow[];
  /** the lines the table closes with, in words: deep-walk's paired ratio, the revocation, each cluster variant */
  notes: string[];
  sensorScripts: SensorScriptRows | null;
}

export interface ScaleStepRow {
  label: StepLabel;
  readings: number | null;
  latencyMs: Record<LatencyKey, number>;
  ingestPerS: number;
  /** the readings and both aggregates with their indexes, after the upkeep, per reading */
  bytesPerReading: number;
  /** the whole database, per reading */
  databaseBytesPerReading: number | null;
  loadPerS: number | null;
  upkeepS: number | null;
  peakDatabaseBytes: number | null;
  wallS: number | null;
  loadAverage: { start: number; end: number } | null;
  /** the 1M store measured alternating with this size */
  beside: { readings: number; latencyMs: Record<LatencyKey, number>; ingestPerS: number } | null;
}

/** The last stdout line of a profile's child process. */
export interface ProfileCurve {
  profile: SensorProfile;
  note: string;
  /** each size as the record keeps it */
  steps: ScaleStepRow[];
  /** the largest growth of the file system under the data directory, WAL included; null when the server is elsewhere */
  peakFileSystemGrowthBytes: number | null;
  wallSeconds: number;
  /** set when a step failed: the curve stops there */
  error: string | null;
}

export interface ScaleProfileRow {
  profile: SensorProfile;
  status: 'measured' | 'not measured' | 'failed';
  reason: string | null;
  note: string | null;
  wallS: number | null;
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
  /** how much the data directory's file system grew at most (WAL and other writers included) */
  peakFileSystemGrowthBytes: number | null;
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
  /** the first failed management calls and ingests, in words */
  failures: string[];
  series: SoakPoint[];
}

export type RunRecord = LoadRecord | ScaleRecord | SoakRecord;

/** The run's facts every line begins with: the commit is HEAD's unless given, the run's end is now unless given. */
export function recordHead<Kind extends RunRecord['kind']>(
  kind: Kind,
  run: { startedAt: Date; finishedAt?: Date; commit?: CommitFacts; machine: MachineFacts; partial: string[] },
): RecordBase & { kind: Kind } {
  return {
    record: RECORD_SHAPE,
    kind,
    date: run.startedAt.toISOString(),
    durationS: ((run.finishedAt ?? new Date()).getTime() - run.startedAt.getTime()) / 1000,
    commit: run.commit ?? commitOfRun(),
    machine: run.machine,
    partial: run.partial,
  };
}

/** The machine at a run's end (`loadAtStart`: the load average when it began; postgres, redis: what the run knew of them). */
export const machineOfRun = (loadAtStart: number, postgres: string | null = null, redis: string | null = null): MachineFacts => ({
  cpuModel: cpus()[0]?.model ?? 'unknown',
  cores: cpus().length,
  memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
  node: process.version,
  postgres,
  redis,
  loadAverage: { start: loadAtStart, end: loadavg()[0]! },
});

/** A warning when the machine was busy besides the run (load average above 3/4 of the cores), or null. */
export function busyWarning(machine: MachineFacts): string | null {
  const load = machine.loadAverage;
  if (!load || machine.cores === null || Math.max(load.start, load.end) <= machine.cores * 0.75) return null;
  return (
    `WARNING: the machine was busy besides this run (1-minute load average ${load.start.toFixed(1)} at the start, ` +
    `${load.end.toFixed(1)} at the end, on ${machine.cores} cores): figures are noisier than usual`
  );
}

// The logs are only appended to: the newest line of a kind is the last (runs.jsonl also holds
// the loadtests' lines, never published).

export function appendRecord(path: string, record: { record: number; kind: string }): void {
  mkdirSync(dirname(path), { recursive: true });
  appendFileSync(path, `${JSON.stringify(record)}\n`);
}

/** Every line of a log, in order; a line that is not a run record of this shape stops it, naming the line. */
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
        parsed.record !== RECORD_SHAPE ||
        (parsed.kind !== 'load' && parsed.kind !== 'scale' && parsed.kind !== 'soak') ||
        typeof parsed.date !== 'string' ||
        !Array.isArray(parsed.targets)
      ) {
        throw new Error(
          `${path}:${index + 1}: not a run record of this kit (record ${RECORD_SHAPE}, kind load, scale or soak, a date and targets)`,
        );
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
