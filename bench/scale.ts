// `npm run bench -- --scale`: the P9 scale curve. Each profile's curve runs in a child process
// (bench/scale-profile.ts), one after the other, so one database exists at a time and neither measures the other.
import { loadavg } from 'node:os';
import type { CommitFacts } from './kit/checkout.js';
import { onCleanUp, runChild, stopAll, wasInterrupted } from './kit/processes.js';
import { recordRun } from './kit/publish.js';
import { formatScaleTable, thousands } from './kit/report.js';
import {
  type MachineFacts,
  machineOfRun,
  type ProfileCurve,
  recordHead,
  type ScaleProfileRow,
  type ScaleRecord,
  type ScaleStepRow,
} from './kit/run-record.js';
import {
  LATENCIES,
  type LatencyKey,
  P9_INGEST_FLOOR,
  P9_LATENCY_LIMIT,
  SCALE_STEPS,
  type ScaleOptions,
  type StepLabel,
  stepsUpTo,
} from './kit/scale-plan.js';
import { profileServer, type SensorProfile, shownUrl } from './kit/sensor-profiles.js';
import { ms } from './kit/statistics.js';
import { adminUrl } from './kit/throwaway-db.js';

export interface ProfileOutcome {
  profile: SensorProfile;
  status: 'measured' | 'not measured' | 'failed';
  /** why not measured, or what failed (the steps before it are kept) */
  reason: string | null;
  curve: ProfileCurve | null;
}

/** One profile's curve from its child process: its stderr passed through, its last curve line on stdout parsed. */
async function runProfile(profile: SensorProfile, options: ScaleOptions): Promise<ProfileOutcome> {
  // BENCH_TIMESCALE_URL: set by sensor-profiles.ts once the server was found
  const env = { ...process.env, BENCH_ADMIN_URL: adminUrl(), BENCH_SENSOR_PROFILE: profile };
  const args = ['--import', 'tsx', 'bench/scale-profile.ts', '--profile', profile, '--scale-max', options.max];
  const child = await runChild(process.execPath, args, { env, inheritStderr: true });
  // the app's log lines may share stdout (a server gone since profileServer() answered: no curve, a failure)
  const line = child.stdout.split('\n').findLast((text) => text.startsWith('{"profile"')) ?? '{}';
  let curve: ProfileCurve | null = null;
  try {
    const parsed = JSON.parse(line) as Partial<ProfileCurve>;
    if (parsed.steps) curve = parsed as ProfileCurve;
  } catch {
    // not a curve after all
  }
  const ended = child.failure && `exited with ${child.failure}`;
  if (curve && !curve.error && !ended) return { profile, status: 'measured', reason: null, curve };
  return { profile, status: 'failed', reason: curve?.error?.split('\n')[0] ?? ended ?? 'printed no curve', curve };
}

export async function runScaleCurve(
  options: ScaleOptions,
  run: { publish: boolean; partial: string[] },
  log: (line: string) => void,
): Promise<void> {
  const startedAt = new Date();
  const loadAtStart = loadavg()[0]!;
  onCleanUp(() => stopAll());
  const steps = stepsUpTo(options.max).map((step) => `${step.label} (${step.units} units)`);
  log(`P9 scale curve: ${steps.join(', ')} on ${options.profiles.join(' and ')}; progress below, the curve at the end`);
  const profiles: ProfileOutcome[] = [];
  for (const profile of options.profiles) {
    const server = await profileServer(profile);
    if (server.reason !== null) {
      log(`${profile} profile: NOT MEASURED (${server.reason})`);
      profiles.push({ profile, status: 'not measured', reason: server.reason, curve: null });
      continue;
    }
    if (wasInterrupted()) break;
    log(`${profile} profile on ${shownUrl(server.adminUrl)}`);
    profiles.push(await runProfile(profile, options));
  }
  if (wasInterrupted()) throw new Error('interrupted');
  const failed = profiles.filter((outcome) => outcome.status === 'failed');
  const partial = [...run.partial, ...failed.map((outcome) => `the ${outcome.profile} profile failed`)];
  const machine = machineOfRun(loadAtStart);
  const record = scaleRecordOf(profiles, { max: options.max, startedAt, machine, partial });
  console.log(formatScaleTable(record));
  recordRun(record, run.publish);
  if (failed.length > 0) process.exitCode = 1;
}

type Measure = LatencyKey | 'ingest';
const TOP = SCALE_STEPS.at(-1)!.label;
const MEASURES: { key: Measure; goal: string; unit: string }[] = [
  ...LATENCIES.map(({ key }) => ({ key, goal: `${TOP} <= ${P9_LATENCY_LIMIT}x 1M`, unit: 'ms' })),
  { key: 'ingest', goal: `${TOP} >= ${P9_INGEST_FLOOR}x 1M`, unit: 'readings/s' },
];
const valueOf = (step: Pick<ScaleStepRow, 'latencyMs' | 'ingestPerS'>, key: Measure) =>
  key === 'ingest' ? step.ingestPerS : step.latencyMs[key];

/** A profile's row: its steps, and the largest size against the 1M store measured beside it (else the 1M step). */
function profileRow({ profile, status, reason, curve }: ProfileOutcome): ScaleProfileRow {
  const steps = curve?.steps ?? [];
  const first = steps.find((step) => step.label === '1M');
  const last = steps.at(-1);
  const base = last?.beside ?? first;
  const ratioOf = (key: Measure) => valueOf(last!, key) / valueOf(base!, key);
  const ratios =
    first && last && base && last !== first
      ? {
          of: last.label,
          against: last.beside ? ('beside' as const) : ('step' as const),
          latency: Object.fromEntries(LATENCIES.map(({ key }) => [key, ratioOf(key)])) as Record<LatencyKey, number>,
          ingest: ratioOf('ingest'),
        }
      : null;
  return { profile, status, reason, note: curve?.note || null, wallS: curve?.wallSeconds ?? null, steps, ratios };
}

/** Every P9 target of each profile, judged at the top size from the profile's ratios. */
function judgeTargets(profiles: ScaleProfileRow[], max: StepLabel): ScaleRecord['targets'] {
  return profiles.flatMap((row) =>
    MEASURES.map(({ key, goal, unit }) => {
      const base = { id: 'P9', profile: row.profile, measure: key, detail: goal };
      const first = row.steps.find((step) => step.label === '1M');
      const last = row.steps.at(-1);
      if (!row.ratios || !first || !last) {
        const why = row.reason ?? (first ? `only 1M was measured (--scale-max ${max})` : 'no size was measured');
        return { ...base, verdict: 'not measured' as const, figure: why, value: null };
      }
      const shown = (figure: number) => (unit === 'ms' ? ms(figure) : thousands(figure));
      const ratio = key === 'ingest' ? row.ratios.ingest : row.ratios.latency[key];
      const figure =
        `${last.label}/1M ${ratio.toFixed(2)}x (${shown(valueOf(last, key))} vs ${shown(valueOf(last.beside ?? first, key))} ${unit}, ` +
        `${last.beside ? 'the 1M store measured beside it' : 'the 1M step'}; the 1M step alone: ${shown(valueOf(first, key))})`;
      if (last.label !== TOP) {
        const stop = `; judged at ${TOP}, the curve stops at ${last.label}${row.reason ? ` (${row.reason})` : ''}`;
        return { ...base, verdict: 'not measured' as const, figure: figure + stop, value: ratio };
      }
      const pass = key === 'ingest' ? ratio >= P9_INGEST_FLOOR : ratio <= P9_LATENCY_LIMIT;
      return { ...base, verdict: pass ? ('pass' as const) : ('miss' as const), figure, value: ratio };
    }),
  );
}

export function scaleRecordOf(
  outcomes: ProfileOutcome[],
  run: { max: StepLabel; startedAt: Date; machine: MachineFacts; partial: string[]; commit?: CommitFacts; finishedAt?: Date },
): ScaleRecord {
  const profiles = outcomes.map(profileRow);
  const stepsDone = outcomes.flatMap((outcome) => outcome.curve?.steps ?? []);
  const growths = outcomes.flatMap((outcome) => outcome.curve?.peakFileSystemGrowthBytes ?? []);
  return {
    ...recordHead('scale', run),
    max: run.max,
    profiles,
    targets: judgeTargets(profiles, run.max),
    peakDatabaseBytes: Math.max(0, ...stepsDone.map((step) => step.peakDatabaseBytes ?? 0)),
    peakFileSystemGrowthBytes: growths.length ? Math.max(...growths) : null,
  };
}
