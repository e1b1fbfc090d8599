// The P14 soak's report (bench/soak.ts): the verdict and the series as text (stdout and
// soak-latest.md), every figure as JSON (soak-<timestamp>.json), and the run's line
// (kind 'soak', run-record.ts) from which --publish renders docs/benchmarks.md's soak section.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CommitFacts, repoRoot, shortHash } from './checkout.js';
import type { SoakRecord } from './run-record.js';
import type { SoakOptions } from './soak-plan.js';
import { P14, type SoakInterval, type SoakVerdict } from './soak-verdict.js';

export interface SoakReport {
  kind: 'soak';
  startedAt: string;
  durationS: number;
  options: SoakOptions;
  machine: { cpus: number; cpuModel: string; memoryGb: number; node: string; loadAverage: { start: number; end: number }; redis: string };
  service: { command: string; workers: number; connections: number };
  dataset: { counts: Record<string, number>; sensorUnits: number };
  intervals: SoakInterval[];
  /** the first failed management calls and ingests, in words */
  failures: string[];
  verdict: SoakVerdict;
}

const GOAL =
  `RSS per worker after the first window grows < ${P14.rssGrowthMbPer10Min} MB per 10 min; p99 of the last window <= ${P14.p99Ratio}x the first; ` +
  'fds, PostgreSQL and Redis connections flat; 0 5xx';

export function soakRunRecord(report: SoakReport, partial: string[], commit: CommitFacts): SoakRecord {
  const round = (value: number | null, digits = 1) => (value === null ? null : Number(value.toFixed(digits)));
  return {
    record: 1,
    kind: 'soak',
    date: report.startedAt,
    durationS: report.durationS,
    commit,
    machine: {
      cpuModel: report.machine.cpuModel,
      cores: report.machine.cpus,
      memoryGb: Math.round(report.machine.memoryGb * 10) / 10,
      node: report.machine.node,
      postgres: null,
      redis: report.machine.redis,
      loadAverage: report.machine.loadAverage,
    },
    partial,
    minutes: report.options.minutes,
    rate: report.options.rate,
    profile: report.options.profile,
    windowMinutes: report.verdict.windowMinutes,
    targets: [
      {
        id: 'P14',
        verdict: report.verdict.pass ? 'pass' : 'miss',
        figure: report.verdict.checks.map((check) => `${check.pass ? '' : 'MISSED '}${check.figure}`).join('; '),
        value: null,
        detail: GOAL,
      },
    ],
    checks: report.verdict.checks.map((check) => ({ id: check.id, pass: check.pass, figure: check.figure, value: round(check.value, 3) })),
    series: report.intervals.map((interval) => ({
      atS: interval.atS,
      requests: interval.requests,
      p50Ms: interval.p50Ms,
      p99Ms: interval.p99Ms,
      status5xx: interval.status5xx,
      rssMb: interval.sample.workers.map((worker) => round(worker.rssMb)),
      fds: interval.sample.workers.map((worker) => worker.fds),
      lagP99Ms: round(interval.sample.lagP99Ms, 2),
      postgres: interval.sample.postgresConnections,
      redis: interval.sample.redisConnections,
    })),
  };
}

const value = (v: number | null, digits = 1) => (v === null ? '-' : v.toFixed(digits));

/** The report as text: verdict, checks, then the series (every minute's last sample). */
export function soakText(report: SoakReport, record: SoakRecord): string {
  const lines = [
    `# P14 soak: ${report.options.minutes} min of the mixed scenario at ${report.options.rate}/s (${report.options.profile} profile)`,
    '',
    `${report.startedAt.slice(0, 16)}Z, ${shortHash(record.commit.hash)}${record.commit.dirty ? ' (with uncommitted changes)' : ''}; ` +
      `${report.service.command}, ${report.service.connections} connections; ${report.machine.cpus} cores, load ${report.machine.loadAverage.start.toFixed(1)} -> ${report.machine.loadAverage.end.toFixed(1)}; ` +
      `windows of ${report.verdict.windowMinutes.toFixed(1)} min; ${(report.durationS / 60).toFixed(1)} min in all`,
    '',
    `**P14 ${report.verdict.pass ? 'PASS' : 'MISSED'}** (${GOAL})`,
    '',
    ...report.verdict.checks.map((check) => `- ${check.pass ? 'pass' : 'MISSED'} ${check.id}: ${check.figure}`),
    ...(report.failures.length > 0 ? ['', 'failures:', ...report.failures.map((failure) => `- ${failure}`)] : []),
    '',
    '| min | req | p50 ms | p99 ms | RSS MB | fds | lag p99 ms | pg | redis | 5xx |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...record.series.map(
      (point) =>
        `| ${(point.atS / 60).toFixed(1)} | ${point.requests} | ${value(point.p50Ms, 0)} | ${value(point.p99Ms, 0)} | ${point.rssMb.map((v) => value(v, 0)).join(' / ')} | ` +
        `${point.fds.map((v) => v ?? '-').join(' / ')} | ${value(point.lagP99Ms, 1)} | ${point.postgres ?? '-'} | ${point.redis ?? '-'} | ${point.status5xx} |`,
    ),
  ];
  return lines.join('\n');
}

/** The files in `dir` (bench/results/ unless a test says otherwise). */
export function writeSoakReport(
  report: SoakReport,
  record: SoakRecord,
  dir = join(repoRoot, 'bench/results'),
): { json: string; markdown: string; text: string } {
  mkdirSync(dir, { recursive: true });
  const stamp = report.startedAt.replace(/[:.]/g, '-');
  const json = join(dir, `soak-${stamp}.json`);
  writeFileSync(json, JSON.stringify(report, null, 2));
  const text = soakText(report, record);
  const markdown = join(dir, 'soak-latest.md');
  writeFileSync(markdown, `${text}\n`);
  return { json, markdown, text };
}
