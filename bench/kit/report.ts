// The tables a run prints, from its record: a load run's loads per scenario and server, notes, the
// sensor scripts per profile and a verdict line per target; the scale curve per profile; the soak's
// verdict, doc section and samples; the loadtest's loads and what to look at first.
import { commitMeasured } from './checkout.js';
import { soakFiguresMarkdown } from './figures-markdown.js';
import type { LoadtestReport } from './loadtest-report.js';
import { busyWarning, type LoadRecord, type ScaleRecord, type SensorScriptRows, type SoakRecord, VERDICT_WORDS } from './run-record.js';
import { LATENCIES } from './scale-plan.js';
import { SENSOR_PROFILES } from './sensor-profiles.js';
import { SENSOR_SCRIPTS } from './sensor-targets.js';
import { gigabytes, ms } from './statistics.js';
import { type TargetKey, TARGET_GOALS } from './targets.js';

/** Table cells: left-aligned and cut, a figure. */
export const pad = (value: string, width: number) =>
  value.length >= width ? value.slice(0, width) : value + ' '.repeat(width - value.length);
export const n = (value: number | null, digits = 1) => (value !== null && Number.isFinite(value) ? value.toFixed(digits) : '-');

/** A fixed-width table: its row() (the cells given), its head (names and a rule); the first `leftAligned` columns left-aligned and cut. */
function textTable(names: string[], widths: number[], leftAligned: number, gap = ' ') {
  const row = (values: string[]) =>
    values.map((value, i) => (i < leftAligned ? pad(value, widths[i]!) : value.padStart(widths[i]!))).join(gap);
  return { row, head: [row(names), '-'.repeat(widths.reduce((sum, width) => sum + width + 1, 0))] };
}

const ratio = (a: number | null, b: number | null) => (a !== null && b !== null ? `${n(a / b, 2)}x` : '-');
const RATIOS = ['okPerS', 'p50Ms', 'p97_5Ms', 'p99Ms'] as const;

/** The scripts side by side, one column per storage profile. */
function sensorScriptLines(scripts: SensorScriptRows): string[] {
  const width = 46;
  const cell = (text: string) => (text.length > width ? `${text.slice(0, width - 1)}…` : text.padEnd(width));
  const lines = ['', 'Sensor scripts by storage profile (bench/sensor-*.ts)'];
  const hosts = SENSOR_PROFILES.map((profile) =>
    cell(`${profile} ${scripts.profiles[profile].host ? `(${scripts.profiles[profile].host})` : ''}`),
  );
  lines.push(`${'target'.padEnd(8)}${hosts.join(' ')}`);
  for (const { key } of SENSOR_SCRIPTS) {
    const outcomes = SENSOR_PROFILES.map((profile) => scripts.outcomes[key][profile]);
    lines.push(
      `${key.padEnd(8)}${outcomes.map((o) => cell(o.status === 'not measured' ? 'NOT MEASURED' : `${VERDICT_WORDS[o.status]} ${o.measured}`)).join(' ')}`,
    );
  }
  for (const profile of SENSOR_PROFILES) {
    const reason = scripts.profiles[profile].reason;
    if (reason) lines.push(`${profile}: NOT MEASURED: ${reason}`);
    else
      for (const { key } of SENSOR_SCRIPTS) {
        const outcome = scripts.outcomes[key][profile];
        if (outcome.status === 'not measured') lines.push(`${key} ${profile}: ${outcome.detail}`);
      }
  }
  return lines;
}

export function formatTable(record: LoadRecord): string {
  const { row, head } = textTable(
    ['scenario', 'load', 'server', '2xx/s', 'p50 ms', 'p97.5 ms', 'p99 ms', 'non-2xx', 'errors', 'RSS/worker MB', 'loop p99'],
    [16, 26, 10, 9, 8, 9, 8, 8, 7, 14, 9],
    3,
  );
  const lines = [
    `coldtrack-api benchmark (${record.mode}): ${record.seconds} s runs, ${record.runsPerServer} per server alternated project/reference; ` +
      `${record.machine.cores} cores shared by both clusters, PostgreSQL, Redis and the load generator`,
  ];
  const busy = busyWarning(record.machine);
  if (busy) lines.push(busy);
  lines.push('', ...head);
  for (const scenario of record.scenarios) {
    if (scenario.notMeasured !== null) {
      lines.push(`${pad(scenario.id, 16)} ${scenario.notMeasured}`);
      continue;
    }
    const { project, reference } = scenario.servers;
    (project ?? reference)?.loads.forEach(({ label }, li) => {
      const [p, r] = (['project', 'reference'] as const).map((server) => {
        const summary = scenario.servers[server];
        const load = summary?.loads.find((candidate) => candidate.label === label);
        if (!summary || !load) return undefined;
        const first = li === 0;
        const loop = load.loopP99Ms != null ? n(load.loopP99Ms) : first && summary.loopP99Ms !== null ? n(summary.loopP99Ms) : '';
        const rss = first ? (summary.peakRssMb?.map((mb) => mb.toFixed(0)).join('/') ?? '-') : '';
        const figures = [load.okPerS, load.p50Ms, load.p97_5Ms, load.p99Ms].map((figure) => n(figure));
        const names = server === 'project' ? [first ? scenario.id : '', label] : ['', ''];
        lines.push(row([...names, server, ...figures, String(load.non2xx), String(load.errors), rss, loop]));
        return load;
      });
      if (p?.p50Ms != null && r?.p50Ms != null) lines.push(row(['', '', 'ratio', ...RATIOS.map((key) => ratio(p[key], r[key]))]));
    });
  }
  lines.push(...record.notes);
  if (record.sensorScripts) lines.push(...sensorScriptLines(record.sensorScripts));
  lines.push('', 'Targets');
  for (const target of record.targets) {
    const goal = TARGET_GOALS[target.id as TargetKey];
    const figure = target.verdict === 'not measured' ? target.detail : `${target.figure}${target.detail ? `; ${target.detail}` : ''}`;
    lines.push(`${target.id} ${pad(VERDICT_WORDS[target.verdict], 12)} ${goal?.title ?? ''} (${goal?.goal ?? ''}): ${figure}`);
  }
  return lines.join('\n');
}

export const thousands = (value: number) => Math.round(value).toLocaleString('en-US');
const or = <T>(value: T | null, shown: (value: T) => string) => (value === null ? '-' : shown(value));
const load = (average: { start: number; end: number } | null, joint = '-') =>
  or(average, ({ start, end }) => `${start.toFixed(1)}${joint}${end.toFixed(1)}`);

/** The curve of each profile as a table, the verdict lines, and disk and time. */
export function formatScaleTable(record: ScaleRecord): string {
  const lines = [
    `P9 scale curve (--scale-max ${record.max}), ${record.date.slice(0, 16).replace('T', ' ')} UTC, commit ${commitMeasured(record.commit)}, ` +
      `${record.machine.cores} cores, load average ${load(record.machine.loadAverage, ' at the start and ')} at the end`,
  ];
  const names = ['size', 'readings', 'load/s', 'upkeep s', ...LATENCIES.map(({ title }) => `${title} ms`), 'ingest/s', 'B/reading'];
  names.push('B/reading db', 'peak db', 'wall s', 'load avg');
  const widths = names.map((name, i) => Math.max(name.length, i === 0 ? 11 : 9));
  const { row: cells } = textTable(names, widths, 1, '  ');
  for (const row of record.profiles) {
    lines.push('', `${row.profile} profile: ${row.note || row.reason || ''}`);
    if (row.steps.length === 0) {
      lines.push(`  NOT MEASURED: ${row.reason ?? 'no size was measured'}`);
      continue;
    }
    lines.push(`  ${cells(names)}`);
    for (const step of row.steps) {
      lines.push(
        `  ${cells([
          step.label,
          or(step.readings, thousands),
          or(step.loadPerS, thousands),
          n(step.upkeepS, 0),
          ...LATENCIES.map(({ key }) => ms(step.latencyMs[key])),
          thousands(step.ingestPerS),
          step.bytesPerReading.toFixed(1),
          n(step.databaseBytesPerReading),
          or(step.peakDatabaseBytes, gigabytes),
          n(step.wallS, 0),
          load(step.loadAverage),
        ])}`,
      );
      if (step.beside) {
        const figures = LATENCIES.map(({ key }) => ms(step.beside!.latencyMs[key]));
        lines.push(`  ${cells(['  1M beside', thousands(step.beside.readings), '', '', ...figures, thousands(step.beside.ingestPerS)])}`);
      }
    }
    if (row.status === 'failed') lines.push(`  FAILED: ${row.reason}`);
    lines.push(
      '  (B/reading: readings and both aggregates with their indexes, after the upkeep; "db": the whole database. "1M beside": the 1M store',
      `  measured alternating with the size above it, where the ratios come from. Wall: ${n(row.wallS, 0)} s)`,
    );
  }
  lines.push('');
  for (const target of record.targets) {
    const title = target.measure === 'ingest' ? 'ingest rate' : `${LATENCIES.find(({ key }) => key === target.measure)!.title} latency`;
    const verdict = target.verdict === 'not measured' ? 'NOT MEASURED' : target.verdict.toUpperCase();
    lines.push(`${verdict} P9 ${target.profile} ${title} (${target.detail}): ${target.figure}`);
  }
  const growth = record.peakFileSystemGrowthBytes;
  lines.push(
    '',
    `peak disk: ${or(record.peakDatabaseBytes, gigabytes)} of databases (the largest size, and the 1M store kept beside it)` +
      (growth === null ? '' : `; the data directory's file system grew by at most ${gigabytes(growth)} (WAL and other writers included)`),
    `wall time: ${or(record.durationS, (s) => `${s.toFixed(0)} s (${(s / 60).toFixed(1)} min)`)}`,
  );
  const busy = busyWarning(record.machine);
  if (busy) lines.push(busy);
  return lines.join('\n');
}

/** The record as text: the verdict, the docs' soak section (kit/figures-markdown.ts), the failures and every sample. */
export function soakText(record: SoakRecord): string {
  const target = record.targets[0]!;
  return [
    `**P14 ${target.verdict === 'pass' ? 'PASS' : 'MISSED'}** (${target.detail})`,
    '',
    soakFiguresMarkdown(record),
    ...(record.failures.length > 0 ? ['', 'failures:', ...record.failures.map((failure) => `- ${failure}`)] : []),
    '',
    '| min | req | p50 ms | p99 ms | RSS MB | fds | lag p99 ms | pg | redis | 5xx |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...record.series.map(
      (point) =>
        `| ${(point.atS / 60).toFixed(1)} | ${point.requests} | ${n(point.p50Ms, 0)} | ${n(point.p99Ms, 0)} | ${point.rssMb.map((v) => n(v, 0)).join(' / ')} | ` +
        `${point.fds.map((v) => v ?? '-').join(' / ')} | ${n(point.lagP99Ms, 1)} | ${point.postgres ?? '-'} | ${point.redis ?? '-'} | ${point.status5xx} |`,
    ),
  ].join('\n');
}

/** What to look at first: 429s, rates not reached, errors, a busy load generator, tokens left active. */
function warningsOf(report: LoadtestReport): string[] {
  const warnings: string[] = [];
  for (const { id, loads } of report.scenarios) {
    for (const { label, rate, rateLimited, connections, figures } of loads) {
      const name = `WARNING: ${id} (${label})`;
      if (rateLimited > 0)
        warnings.push(
          `${name}: ${rateLimited} answers were 429: the rate was above what the credentials may send (100 a minute a token; 600 reads a minute an employee)`,
        );
      if (figures.okPerS < 0.9 * rate)
        warnings.push(
          `${name}: ${n(figures.okPerS)} of the ${rate} 2xx/s asked: the deployment was saturated, or ${connections} connections were too few for its latency (--connections)`,
        );
      if (figures.errors > 0)
        warnings.push(`${name}: ${figures.errors} requests failed without an answer (connection errors or 30 s timeouts)`);
    }
  }
  // the bench's rule for a busy machine, here the load generator's: its delays are in the latencies
  const busy = busyWarning(report.loadGenerator);
  if (busy) warnings.push(busy);
  const { leftActive, namePrefix, expiresAt } = report.tokens;
  if (leftActive.length > 0) {
    warnings.push(
      `WARNING: the revocation did not finish (${leftActive.length} failures, the first: ${leftActive[0]!.reason}): ` +
        `revoke the active tokens named "${namePrefix}..." in the console; they expire at ${expiresAt}`,
    );
  }
  return warnings;
}

export function formatLoadtestTable(report: LoadtestReport): string {
  const { row, head } = textTable(
    ['scenario', 'load', 'asked/s', '2xx/s', 'p50 ms', 'p97.5 ms', 'p99 ms', '429', 'other non-2xx', 'errors'],
    [16, 22, 8, 9, 8, 9, 8, 6, 16, 7],
    2,
  );
  const { tokens, plan } = report;
  const each = `(${n(tokens.perTokenPerMinute ?? 0, 0)} requests a minute each)`;
  const credentials = {
    created: `${tokens.count} tokens created and revoked ${each}`,
    file: `${tokens.count} tokens from --tokens-file ${each}`,
    none: "the employee's JWT only",
  }[tokens.source];
  const lines = [
    `coldtrack-api loadtest of the deployment at ${report.deployment.url}: ${plan.rate} requests/s a scenario, ${plan.seconds} s runs after a ${plan.warmupSeconds} s warm-up; ${credentials}`,
    '',
    ...head,
  ];
  for (const scenario of report.scenarios) {
    if (scenario.status !== 'measured') lines.push(`${pad(scenario.id, 16)} ${scenario.reason}`);
    scenario.loads.forEach(({ label, rate, figures: f, rateLimited, otherNon2xx }, index) => {
      // no answer completed within the run: there is no latency to show
      const latencies = [f.latencyMs.p50, f.latencyMs.p97_5, f.latencyMs.p99].map((value) => (f.reqPerS > 0 ? n(value) : '-'));
      const other = Object.entries(otherNon2xx).map(([code, count]) => `${code}: ${count}`);
      lines.push(
        row([
          index === 0 ? scenario.id : '',
          label,
          String(rate),
          n(f.okPerS),
          ...latencies,
          String(rateLimited),
          other.join(', ') || '0',
          String(f.errors),
        ]),
      );
    });
  }
  const warnings = warningsOf(report);
  if (warnings.length > 0) lines.push('', ...warnings);
  return lines.join('\n');
}
