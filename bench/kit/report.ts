// The report of a run, as the table on stdout prints it; its record (run-record.ts) is the one
// file it leaves, a line of bench/results/runs.jsonl.
import type { MachineOfRun } from './checkout.js';
import type { DatasetSize, Mode } from './config.js';
import { pairedP50Ratio } from './statistics.js';
import type { RevocationFigures } from './revocation.js';
import type { LoadSummary, ScenarioResult } from './results.js';
import { formatSensorScripts, type SensorScriptResults } from './sensor-targets.js';
import type { TargetResult } from './targets.js';
import { type VariantResult, variantLine } from './variants.js';

export interface Report {
  kit: 'coldtrack-api bench';
  version: 1;
  mode: Mode;
  startedAt: string;
  finishedAt: string;
  durationS: number;
  seconds: number;
  runsPerServer: number;
  /** loadAverage: above the core count, something else was busy */
  machine: MachineOfRun & { postgres: string; redis: string; commit: string; note: string };
  services: Record<'project' | 'reference', { command: string; workers: number }>;
  dataset: {
    database: string;
    window: string;
    size: DatasetSize;
    counts: Record<string, number>;
    buildSeconds: number;
    sensorReadings: { rows: number; seconds: number } | null;
  };
  sensor: { available: boolean; reason: string };
  scenarios: ScenarioResult[];
  revocation: RevocationFigures | { error: string } | null;
  /** the cluster variants against the cluster as shipped (kit/variants.ts); absent in older reports */
  variants?: VariantResult[] | null;
  /** bench/sensor-*.ts on each storage profile, side by side (null: not run) */
  sensorScripts?: SensorScriptResults | null;
  targets: TargetResult[];
  notes: string[];
}

/** Table cells (also the loadtest's table, loadtest-report.ts): left-aligned and cut, a figure. */
export const pad = (value: string, width: number) =>
  value.length >= width ? value.slice(0, width) : value + ' '.repeat(width - value.length);
export const n = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : '-');

/** A fixed-width table: its row(), and its head (names and a rule); the first `leftAligned` columns left-aligned and cut. */
export function textTable(columns: [string, number][], leftAligned: number) {
  const row = (values: string[]) =>
    columns.map(([, width], i) => (i < leftAligned ? pad(values[i] ?? '', width) : (values[i] ?? '').padStart(width))).join(' ');
  return { row, head: [row(columns.map(([name]) => name)), '-'.repeat(columns.reduce((sum, [, width]) => sum + width + 1, 0))] };
}

export function formatTable(report: Report): string {
  const { row, head } = textTable(
    [
      ['scenario', 16],
      ['load', 26],
      ['server', 10],
      ['2xx/s', 9],
      ['p50 ms', 8],
      ['p97.5 ms', 9],
      ['p99 ms', 8],
      ['non-2xx', 8],
      ['errors', 7],
      ['RSS/worker MB', 14],
      ['loop p99', 9],
    ],
    3,
  );
  const lines: string[] = [];
  lines.push(
    `coldtrack-api benchmark (${report.mode}): ${report.seconds} s runs, ${report.runsPerServer} per server alternated project/reference; ` +
      `${report.machine.cpus} cores shared by both clusters, PostgreSQL, Redis and the load generator`,
  );
  const busiest = Math.max(report.machine.loadAverage.start, report.machine.loadAverage.end);
  if (busiest > report.machine.cpus * 0.75) {
    lines.push(
      `WARNING: the machine was busy besides this run (1-minute load average ${report.machine.loadAverage.start.toFixed(1)} at the start, ` +
        `${report.machine.loadAverage.end.toFixed(1)} at the end, on ${report.machine.cpus} cores): figures are noisier than usual`,
    );
  }
  lines.push('', ...head);
  for (const scenario of report.scenarios) {
    if (scenario.status !== 'measured') {
      lines.push(`${pad(scenario.id, 16)} ${scenario.reason}`);
      continue;
    }
    const labels = Object.keys(scenario.summary.project?.loads ?? scenario.summary.reference?.loads ?? {});
    labels.forEach((label, li) => {
      const figures: Partial<Record<'project' | 'reference', LoadSummary>> = {};
      for (const server of ['project', 'reference'] as const) {
        const summary = scenario.summary[server];
        const load = summary?.loads[label];
        if (!summary || !load) continue;
        figures[server] = load;
        // no answer completed within the run: there is no latency to show
        const latency = (ms: number) => (load.reqPerS > 0 ? n(ms) : '-');
        lines.push(
          row([
            li === 0 && server === 'project' ? scenario.id : '',
            server === 'project' ? label : '',
            server,
            n(load.okPerS),
            latency(load.latencyMs.p50),
            latency(load.latencyMs.p97_5),
            latency(load.latencyMs.p99),
            String(load.non2xx),
            String(load.errors),
            li === 0 ? summary.rssMb.map((mb) => mb.toFixed(0)).join('/') : '',
            li === 0 && summary.loop ? n(summary.loop.p99Ms) : '',
          ]),
        );
      }
      if (figures.project && figures.reference && figures.project.reqPerS > 0 && figures.reference.reqPerS > 0) {
        const p = figures.project;
        const r = figures.reference;
        lines.push(
          row([
            '',
            '',
            'ratio',
            `${n(p.okPerS / r.okPerS, 2)}x`,
            `${n(p.latencyMs.p50 / r.latencyMs.p50, 2)}x`,
            `${n(p.latencyMs.p97_5 / r.latencyMs.p97_5, 2)}x`,
            `${n(p.latencyMs.p99 / r.latencyMs.p99, 2)}x`,
          ]),
        );
      }
    });
  }
  const deep = report.scenarios.find((scenario) => scenario.id === 'deep-walk' && scenario.status === 'measured');
  const pairs = deep && pairedP50Ratio(deep.runs, 'project', 'page 500', 'page 1');
  if (pairs) {
    // the cluster's figure beside P3's (the scripts'): warm pages, one profile, under load
    const interval = pairs.interval ? `, 95 % CI ${n(pairs.interval[0], 2)}-${n(pairs.interval[1], 2)}x` : '';
    lines.push(
      `${pad('deep-walk', 16)} page 500 / page 1 p50: ${n(pairs.mean, 2)}x over ${pairs.ratios.length} alternating pairs${interval}`,
    );
  }
  if (report.revocation) {
    lines.push(
      'error' in report.revocation
        ? `${pad('revocation', 16)} ${report.revocation.error}`
        : `${pad('revocation', 16)} ${report.revocation.rounds} rounds: ${report.revocation.acceptedAfterRevoke} of ${report.revocation.requestsAfterRevoke} requests started after the revoke returned were accepted ` +
            `(${JSON.stringify(report.revocation.statusesAfterRevoke)}); ${report.revocation.acceptedBeforeRevoke} accepted before; revoke p50 ${n(report.revocation.revokeMs.p50)} ms`,
    );
  }
  for (const variant of report.variants ?? []) lines.push(variantLine(variant));
  if (report.sensorScripts) lines.push(...formatSensorScripts(report.sensorScripts));
  lines.push('');
  lines.push('Targets');
  for (const target of report.targets) {
    const status = target.status === 'pass' ? 'PASS' : target.status === 'miss' ? 'MISSED' : 'NOT MEASURED';
    const figure = target.status === 'not measured' ? target.detail : `${target.measured}${target.detail ? `; ${target.detail}` : ''}`;
    lines.push(`${target.key} ${pad(status, 12)} ${target.title} (${target.goal}): ${figure}`);
  }
  return lines.join('\n');
}
