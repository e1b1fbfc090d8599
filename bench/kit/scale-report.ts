// The P9 scale curve's report: the targets judged from each profile's curve (the largest size
// against 1M) and the table on stdout; its record (run-record.ts) is the one file it leaves.
import type { MachineOfRun } from './checkout.js';
import {
  LATENCIES,
  type LatencyKey,
  P9_INGEST_FLOOR,
  P9_LATENCY_LIMIT,
  type ProfileCurve,
  SCALE_STEPS,
  type StepFigures,
  type StepLabel,
} from './scale-plan.js';
import type { SensorProfile } from './sensor-profiles.js';
import { gigabytes, ms } from './statistics.js';

export interface ProfileOutcome {
  profile: SensorProfile;
  status: 'measured' | 'not measured' | 'failed';
  /** why not measured, or what failed (the steps before it are kept) */
  reason: string | null;
  curve: ProfileCurve | null;
}

export interface ScaleTarget {
  profile: SensorProfile;
  key: LatencyKey | 'ingest';
  title: string;
  goal: string;
  status: 'pass' | 'miss' | 'not measured';
  /** largest size / 1M (latency), or its inverse sense for ingest: largest / 1M rate */
  ratio: number | null;
  measured: string;
}

export interface ScaleReport {
  kit: 'coldtrack-api bench --scale';
  version: 1;
  startedAt: string;
  finishedAt: string;
  durationS: number;
  max: StepLabel;
  machine: MachineOfRun & { commit: string };
  profiles: ProfileOutcome[];
  targets: ScaleTarget[];
  /** the highest pg_database_size of any size of any profile, with the 1M store kept beside it (one profile at a time) */
  peakDatabaseBytes: number;
  peakFileSystemGrowthBytes: number | null;
}

const thousands = (value: number) => Math.round(value).toLocaleString('en-US');
export const perReading = (bytes: number, step: StepFigures) => bytes / step.readings;

/** The 1M figures a size's ratios are taken against: the 1M store measured beside it, else the 1M step's own. */
export function baselineOf(step: StepFigures, first: StepFigures): Pick<StepFigures, 'latencyMs' | 'ingest'> {
  return step.beside ?? first;
}

/**
 * Every P9 target of each profile, judged at 100M: the largest size against the 1M store
 * measured beside it (alternating, in the same minutes); the 1M step's own figure is shown too.
 */
export function judgeTargets(profiles: ProfileOutcome[], max: StepLabel): ScaleTarget[] {
  const top = SCALE_STEPS.at(-1)!.label;
  const targets: ScaleTarget[] = [];
  for (const outcome of profiles) {
    const steps = outcome.curve?.steps ?? [];
    const first = steps.find((step) => step.label === '1M');
    const last = steps.at(-1);
    const judge = (
      key: ScaleTarget['key'],
      title: string,
      goal: string,
      value: (step: Pick<StepFigures, 'latencyMs' | 'ingest'>) => number,
      pass: (ratio: number) => boolean,
      unit: string,
    ) => {
      const base = { profile: outcome.profile, key, title, goal };
      if (!first || !last || last === first) {
        const why = outcome.reason ?? (first ? `only 1M was measured (--scale-max ${max})` : 'no size was measured');
        targets.push({ ...base, status: 'not measured', ratio: null, measured: why });
        return;
      }
      const shown = (figure: number) => (unit === 'ms' ? ms(figure) : thousands(figure));
      const baseline = value(baselineOf(last, first));
      const ratio = value(last) / baseline;
      const figure =
        `${last.label}/1M ${ratio.toFixed(2)}x (${shown(value(last))} vs ${shown(baseline)} ${unit}, ` +
        `${last.beside ? 'the 1M store measured beside it' : 'the 1M step'}; the 1M step alone: ${shown(value(first))})`;
      if (last.label !== top) {
        targets.push({
          ...base,
          status: 'not measured',
          ratio,
          measured: `${figure}; judged at ${top}, the curve stops at ${last.label}${outcome.reason ? ` (${outcome.reason})` : ''}`,
        });
        return;
      }
      targets.push({ ...base, status: pass(ratio) ? 'pass' : 'miss', ratio, measured: figure });
    };
    for (const latency of LATENCIES) {
      judge(
        latency.key,
        `${latency.title} latency`,
        `${top} <= ${P9_LATENCY_LIMIT}x 1M`,
        (step) => step.latencyMs[latency.key],
        (ratio) => ratio <= P9_LATENCY_LIMIT,
        'ms',
      );
    }
    judge(
      'ingest',
      'ingest rate',
      `${top} >= ${P9_INGEST_FLOOR}x 1M`,
      (step) => step.ingest.median,
      (ratio) => ratio >= P9_INGEST_FLOOR,
      'readings/s',
    );
  }
  return targets;
}

function pad(cells: string[], widths: number[]) {
  return cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
}

/** The curve of each profile as a table, the targets, and disk and time. */
export function formatScaleReport(report: ScaleReport): string {
  const lines: string[] = [];
  lines.push(
    `P9 scale curve (--scale-max ${report.max}), ${report.startedAt.slice(0, 16).replace('T', ' ')} UTC, commit ${report.machine.commit}, ` +
      `${report.machine.cpus} cores, load average ${report.machine.loadAverage.start.toFixed(1)} at the start and ${report.machine.loadAverage.end.toFixed(1)} at the end`,
  );
  const head = [
    'size',
    'readings',
    'load/s',
    'upkeep s',
    ...LATENCIES.map((latency) => `${latency.title} ms`),
    'ingest/s',
    'B/reading',
    'B/reading db',
    'peak db',
    'wall s',
    'load avg',
  ];
  const widths = head.map((cell, i) => Math.max(cell.length, i === 0 ? 11 : 9));
  for (const outcome of report.profiles) {
    lines.push('', `${outcome.profile} profile: ${outcome.curve?.note || outcome.reason || ''}`);
    if (!outcome.curve || outcome.curve.steps.length === 0) {
      lines.push(`  NOT MEASURED: ${outcome.reason ?? 'no size was measured'}`);
      continue;
    }
    lines.push(`  ${pad(head, widths)}`);
    for (const step of outcome.curve.steps) {
      lines.push(
        `  ${pad(
          [
            step.label,
            thousands(step.readings),
            thousands(step.load.perSecond),
            step.upkeep.seconds.toFixed(0),
            ...LATENCIES.map((latency) => ms(step.latencyMs[latency.key])),
            thousands(step.ingest.median),
            perReading(step.bytes.readings + step.bytes.aggregates, step).toFixed(1),
            perReading(step.bytes.database, step).toFixed(1),
            gigabytes(step.peakDatabaseBytes),
            step.wallSeconds.toFixed(0),
            `${step.loadAverage.start.toFixed(1)}-${step.loadAverage.end.toFixed(1)}`,
          ],
          widths,
        )}`,
      );
      if (step.beside) {
        lines.push(
          `  ${pad(
            [
              '  1M beside',
              thousands(step.beside.readings),
              '',
              '',
              ...LATENCIES.map((latency) => ms(step.beside!.latencyMs[latency.key])),
              thousands(step.beside.ingest.median),
            ],
            widths,
          )}`,
        );
      }
    }
    if (outcome.status === 'failed') lines.push(`  FAILED: ${outcome.reason}`);
    lines.push(
      '  (B/reading: readings and both aggregates with their indexes, after the upkeep; "db": the whole database. "1M beside": the 1M store,',
      `  kept with the live batches it took so far, measured alternating with the size above it: the ratios below come from that pair. Wall: ${outcome.curve.wallSeconds.toFixed(0)} s)`,
    );
  }
  lines.push('');
  for (const target of report.targets) {
    const verdict = target.status === 'not measured' ? 'NOT MEASURED' : target.status.toUpperCase();
    lines.push(`${verdict} P9 ${target.profile} ${target.title} (${target.goal}): ${target.measured}`);
  }
  lines.push(
    '',
    `peak disk: ${gigabytes(report.peakDatabaseBytes)} of databases (the largest size, and the 1M store kept beside it)` +
      (report.peakFileSystemGrowthBytes === null
        ? ''
        : `; the data directory's file system grew by at most ${gigabytes(report.peakFileSystemGrowthBytes)} (WAL and other writers included)`),
  );
  lines.push(`wall time: ${report.durationS.toFixed(0)} s (${(report.durationS / 60).toFixed(1)} min)`);
  if (report.machine.loadAverage.start > report.machine.cpus * 0.75) {
    lines.push(
      `WARNING: the machine was busy before the run began (load average ${report.machine.loadAverage.start.toFixed(1)} on ${report.machine.cpus} cores): absolute figures are slower than on a quiet machine, and ratios noisier`,
    );
  }
  return lines.join('\n');
}
