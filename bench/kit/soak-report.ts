// The P14 soak's report (bench/soak.ts): the verdict and the series as text (stdout and
// soak-latest.md), every figure as JSON (soak-<timestamp>.json), the chart of RSS, p50/p99,
// event-loop lag, fds and connections over time as SVG (soak-latest.svg), and the run's line
// (kind 'soak', run-record.ts) from which --publish renders docs/benchmarks.md's soak section.
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { type CommitFacts, shortHash } from './git-state.js';
import { CHARTS } from './publish-paths.js';
import { repoRoot } from './repo-root.js';
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

type Series = SoakRecord['series'];

interface Panel {
  title: string;
  unit: string;
  lines: { label: string; color: string; values: (number | null)[] }[];
}

const COLORS = ['#1f6feb', '#d1242f', '#1a7f37', '#9a6700'];

function panelsOf(series: Series): Panel[] {
  const workers = Math.max(0, ...series.map((point) => point.rssMb.length));
  const perWorker = (pick: (point: Series[number]) => (number | null)[]) =>
    Array.from({ length: workers }, (_, w) => ({
      label: `worker ${w + 1}`,
      color: COLORS[w % COLORS.length]!,
      values: series.map((p) => pick(p)[w] ?? null),
    }));
  return [
    { title: 'RSS per worker', unit: 'MB', lines: perWorker((p) => p.rssMb) },
    {
      title: 'latency per interval',
      unit: 'ms',
      lines: [
        { label: 'p50', color: COLORS[0]!, values: series.map((p) => p.p50Ms) },
        { label: 'p99', color: COLORS[1]!, values: series.map((p) => p.p99Ms) },
      ],
    },
    { title: 'event-loop lag p99', unit: 'ms', lines: [{ label: 'lag p99', color: COLORS[2]!, values: series.map((p) => p.lagP99Ms) }] },
    { title: 'open fds per worker', unit: 'fds', lines: perWorker((p) => p.fds) },
    {
      title: 'connections',
      unit: 'conns',
      lines: [
        { label: 'PostgreSQL', color: COLORS[0]!, values: series.map((p) => p.postgres) },
        { label: 'Redis', color: COLORS[1]!, values: series.map((p) => p.redis) },
      ],
    },
  ];
}

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** Five panels stacked, one x axis (minutes of load): a line per worker or per figure. */
export function soakChartSvg(record: SoakRecord): string {
  const width = 900;
  const panelHeight = 150;
  const left = 60;
  const right = 150;
  const top = 40;
  const panels = panelsOf(record.series);
  const height = top + panels.length * (panelHeight + 30) + 20;
  const endMin = Math.max(record.series.at(-1)?.atS ?? 0, 1) / 60;
  const x = (atS: number) => left + ((atS / 60) * (width - left - right)) / endMin;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="${left}" y="20" font-size="14">${escape(
      `P14 soak: ${record.minutes} min at ${record.rate}/s, ${record.profile} profile, ${record.date.slice(0, 16)}Z, ${shortHash(record.commit.hash)}: ${record.targets[0]!.verdict.toUpperCase()}`,
    )}</text>`,
  ];
  panels.forEach((panel, index) => {
    const y0 = top + index * (panelHeight + 30) + 15;
    const values = panel.lines.flatMap((line) => line.values.filter((v): v is number => v !== null));
    const low = Math.min(0, ...values);
    const high = Math.max(1, ...values) * 1.1;
    const y = (value: number) => y0 + panelHeight - ((value - low) / (high - low)) * panelHeight;
    out.push(`<text x="${left}" y="${y0 - 4}">${escape(`${panel.title} (${panel.unit})`)}</text>`);
    out.push(`<rect x="${left}" y="${y0}" width="${width - left - right}" height="${panelHeight}" fill="none" stroke="#ccc"/>`);
    for (const tick of [low, (low + high) / 2, high]) {
      out.push(`<text x="${left - 4}" y="${y(tick) + 4}" text-anchor="end">${tick.toFixed(tick < 10 ? 1 : 0)}</text>`);
    }
    // the verdict's windows: the first and the last, shaded
    const windowS = record.windowMinutes * 60;
    const endS = record.series.at(-1)?.atS ?? 0;
    for (const [from, to] of [
      [0, windowS],
      [Math.max(0, endS - windowS), endS],
    ] as const) {
      out.push(
        `<rect x="${x(from)}" y="${y0}" width="${Math.max(0, x(to) - x(from))}" height="${panelHeight}" fill="#000" fill-opacity="0.04"/>`,
      );
    }
    panel.lines.forEach((line, k) => {
      const points = record.series.flatMap((point, i) =>
        line.values[i] == null ? [] : [`${x(point.atS).toFixed(1)},${y(line.values[i]!).toFixed(1)}`],
      );
      if (points.length > 0) out.push(`<polyline fill="none" stroke="${line.color}" stroke-width="1.5" points="${points.join(' ')}"/>`);
      out.push(`<text x="${width - right + 10}" y="${y0 + 14 + k * 14}" fill="${line.color}">${escape(line.label)}</text>`);
    });
  });
  const axisY = height - 12;
  for (let m = 0; m <= endMin + 1e-9; m += Math.max(1, Math.round(endMin / 10))) {
    out.push(`<text x="${x(m * 60)}" y="${axisY}" text-anchor="middle">${m} min</text>`);
  }
  out.push('</svg>');
  return out.join('\n');
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
): { json: string; markdown: string; chart: string; text: string } {
  mkdirSync(dir, { recursive: true });
  const stamp = report.startedAt.replace(/[:.]/g, '-');
  const json = join(dir, `soak-${stamp}.json`);
  writeFileSync(json, JSON.stringify(report, null, 2));
  const text = soakText(report, record);
  const markdown = join(dir, 'soak-latest.md');
  writeFileSync(markdown, `${text}\n\n![P14 soak](soak-latest.svg)\n`);
  const chart = join(dir, basename(CHARTS.soak.written));
  writeFileSync(chart, soakChartSvg(record));
  return { json, markdown, chart, text };
}
