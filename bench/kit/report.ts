// The table a run prints, from its record: each scenario's loads per server, the notes, the sensor
// scripts per profile, a verdict line per target. Its cells serve the loadtest's table too.
import { busyWarning, type LoadRecord, type LoadRow, type SensorScriptRows, VERDICT_WORDS } from './run-record.js';
import { SENSOR_PROFILES } from './sensor-profiles.js';
import { SENSOR_SCRIPTS } from './sensor-targets.js';
import { type TargetKey, TARGET_GOALS } from './targets.js';

/** Table cells (also the loadtest's table, loadtest-report.ts): left-aligned and cut, a figure. */
export const pad = (value: string, width: number) =>
  value.length >= width ? value.slice(0, width) : value + ' '.repeat(width - value.length);
export const n = (value: number | null, digits = 1) => (value !== null && Number.isFinite(value) ? value.toFixed(digits) : '-');

/** A fixed-width table: its row(), and its head (names and a rule); the first `leftAligned` columns left-aligned and cut. */
export function textTable(columns: [string, number][], leftAligned: number) {
  const row = (values: string[]) =>
    columns.map(([, width], i) => (i < leftAligned ? pad(values[i] ?? '', width) : (values[i] ?? '').padStart(width))).join(' ');
  return { row, head: [row(columns.map(([name]) => name)), '-'.repeat(columns.reduce((sum, [, width]) => sum + width + 1, 0))] };
}

const ratio = (a: number | null, b: number | null) => (a !== null && b !== null ? `${n(a / b, 2)}x` : '-');

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
      const figures: Partial<Record<'project' | 'reference', LoadRow>> = {};
      for (const [server, summary] of [
        ['project', project],
        ['reference', reference],
      ] as const) {
        const load = summary?.loads.find((candidate) => candidate.label === label);
        if (!summary || !load) continue;
        figures[server] = load;
        lines.push(
          row([
            li === 0 && server === 'project' ? scenario.id : '',
            server === 'project' ? label : '',
            server,
            n(load.okPerS),
            n(load.p50Ms),
            n(load.p97_5Ms),
            n(load.p99Ms),
            String(load.non2xx),
            String(load.errors),
            li === 0 ? (summary.peakRssMb?.map((mb) => mb.toFixed(0)).join('/') ?? '-') : '',
            load.loopP99Ms != null ? n(load.loopP99Ms) : li === 0 && summary.loopP99Ms !== null ? n(summary.loopP99Ms) : '',
          ]),
        );
      }
      const { project: p, reference: r } = figures;
      if (p && r && p.p50Ms !== null && r.p50Ms !== null) {
        lines.push(
          row([
            '',
            '',
            'ratio',
            `${n(p.okPerS / r.okPerS, 2)}x`,
            ratio(p.p50Ms, r.p50Ms),
            ratio(p.p97_5Ms, r.p97_5Ms),
            ratio(p.p99Ms, r.p99Ms),
          ]),
        );
      }
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
