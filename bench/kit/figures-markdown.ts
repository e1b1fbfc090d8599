// docs/benchmarks.md's tables, between its bench markers: each section rendered from the history's
// newest complete line of its kind; short on purpose, every figure stays in the record.
import { BENCHMARKS_DOC, type CommitFacts, shortHash } from './checkout.js';
import {
  busyWarning,
  type LoadRecord,
  newestComplete,
  type RunRecord,
  type ScaleRecord,
  type SoakRecord,
  VERDICT_WORDS as VERDICT,
} from './run-record.js';
import { LATENCIES } from './scale-plan.js';
import { SENSOR_PROFILES } from './sensor-profiles.js';
import { type ScriptOutcome, type ScriptTarget, SENSOR_SCRIPTS } from './sensor-targets.js';

/** The scripts in the order and with the letters docs/benchmarks.md describes them by. */
const SCRIPT_ROWS: [string, ScriptTarget][] = [
  ['(a)', 'P4'],
  ['(b)', 'P3'],
  ['(c)', 'P6'],
  ['(d)', 'P2'],
];

/** A table cell on one line, its pipes escaped; an empty one as `| |`. */
const cell = (text: string) => ` ${text.replace(/\s+/g, ' ').replace(/\|/g, '\\|').trim()} `.replace(/^ {2}$/, ' ');

function table(head: string[], rows: string[][]): string {
  return [head, head.map(() => '---'), ...rows]
    .map((row, i) => `|${row.map((text) => (i === 1 ? text : cell(text))).join('|')}|`)
    .join('\n');
}

/** A paragraph wrapped at the doc's width, a number kept on the line of the word after it. */
function paragraph(sentences: string[], width = 100): string {
  const words = sentences
    .join(' ')
    .split(' ')
    .reduce<string[]>((kept, word) => {
      const previous = kept.at(-1);
      if (previous !== undefined && /^[\d.,]+$/.test(previous)) kept[kept.length - 1] = `${previous} ${word}`;
      else kept.push(word);
      return kept;
    }, []);
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line].join('\n');
}

const when = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
const duration = (seconds: number | null) =>
  seconds === null ? '' : `, ${Math.floor(Math.round(seconds) / 60)} min ${Math.round(seconds) % 60} s`;

const commitWords = (commit: CommitFacts) =>
  `commit ${shortHash(commit.hash)}${commit.dirty ? ' with uncommitted changes' : ''}` +
  (commit.movedTo ? ` (HEAD moved to ${shortHash(commit.movedTo)} during the run)` : '');

/** A section's caption: the command, when, which commit, how long (and `extra`); the verdicts; the machine; what the line is. */
function caption(record: RunRecord, command: string, extra: string, verdicts: string[], sharedBy: string): string {
  const { cores, cpuModel, loadAverage: load, node, postgres, redis } = record.machine;
  const versions = [node && `Node ${node}`, postgres, redis && `Redis ${redis}`].filter(Boolean).join(', ');
  const machine = [
    cores !== null && `${cores} cores${cpuModel ? ` (${cpuModel.trim()})` : ''}${sharedBy}`,
    load &&
      `load average ${load.start.toFixed(1)} at the start and ${load.end.toFixed(1)} at the end` +
        (busyWarning(record.machine) ? ' (the machine was busy besides: noisier figures)' : ''),
    versions,
  ].filter(Boolean);
  return paragraph([
    `${command}, ${when(record.date)}, ${commitWords(record.commit)}${duration(record.durationS)}${extra}.`,
    ...verdicts,
    ...(machine.length > 0 ? [`${machine.join('; ')}.`] : []),
    ...(record.partial.length > 0 ? [`Partial run (${record.partial.join('; ')}): not a release run.`] : []),
    ...(record.imported ? [`Imported ${record.imported}.`] : []),
  ]);
}

const rate = (perSecond: number) => (perSecond >= 100 ? Math.round(perSecond).toLocaleString('en-US') : perSecond.toFixed(1));

function scriptCell(outcome: ScriptOutcome | undefined): string {
  if (!outcome) return '';
  if (outcome.status === 'not measured') return `NOT MEASURED: ${outcome.detail.replace(/^not measured: /, '')}`;
  return `${VERDICT[outcome.status]}: ${outcome.measured}`;
}

/** `npm run bench`: the caption, the targets, the sensor scripts per profile, throughput per scenario. */
export function loadFiguresMarkdown(record: LoadRecord): string {
  const command = `\`npm run bench\` (${record.mode}, ${record.seconds} s runs, ${record.runsPerServer} per server)`;
  const targets = table(
    ['target', 'verdict', 'figure'],
    record.targets.map((target) => [target.id, VERDICT[target.verdict], target.figure]),
  );
  const parts = [caption(record, command, '', [], ' shared by both clusters, PostgreSQL, Redis and the load generator'), targets];
  if (record.sensorScripts) {
    const scripts = record.sensorScripts;
    parts.push(
      'The sensor scripts, on each storage profile:',
      table(
        ['script', 'target', ...SENSOR_PROFILES],
        SCRIPT_ROWS.map(([letter, key]) => {
          const script = SENSOR_SCRIPTS.find((candidate) => candidate.key === key)!;
          return [
            `${letter} \`${script.file.replace(/\.ts$/, '')}\``,
            `${key} ${scripts.goals[key]}`,
            ...SENSOR_PROFILES.map((profile) => scriptCell(scripts.outcomes[key]?.[profile])),
          ];
        }),
      ),
    );
  }
  parts.push(
    'Throughput per scenario, the first load of each (what [the capacity model](operations.md#capacity-model) reads):',
    table(
      ['scenario', 'project 2xx/s', 'reference 2xx/s'],
      record.scenarios.map((scenario) => {
        if (scenario.notMeasured !== null) return [scenario.id, `not measured: ${scenario.notMeasured.replace(/^not measured: /, '')}`, ''];
        const project = scenario.servers.project?.loads[0];
        const reference = scenario.servers.reference?.loads[0];
        return [scenario.id, project ? rate(project.okPerS) : '', reference ? rate(reference.okPerS) : ''];
      }),
    ),
  );
  return parts.join('\n\n');
}

const size = (label: string) => label.replace(/M$/, ' M');
const ms = (value: number) => `${value >= 100 ? value.toFixed(0) : value.toFixed(1)} ms`;
const measureTitle = (measure: string) => LATENCIES.find((latency) => latency.key === measure)?.title ?? `${measure} rate`;

/** The P9 verdicts in one sentence. */
function scaleVerdicts(record: ScaleRecord): string {
  const missed = record.targets.filter((target) => target.verdict === 'miss');
  const unmeasured = [...new Set(record.targets.filter((target) => target.verdict === 'not measured').map((target) => target.profile))];
  if (missed.length === 0 && unmeasured.length === 0) return 'Every P9 target passed on both profiles.';
  return [
    missed.length > 0
      ? `P9 missed: ${missed.map((target) => `${target.profile} ${measureTitle(target.measure)} (${target.value?.toFixed(2)}x)`).join(', ')}.`
      : 'P9 passed where measured.',
    ...unmeasured.map(
      (profile) =>
        `Not judged on ${profile}: ${record.targets.find((target) => target.profile === profile && target.verdict === 'not measured')!.figure}.`,
    ),
  ].join(' ');
}

/** `npm run bench -- --scale`: the caption and the curve of each profile, its ratios judged. */
export function scaleFiguresMarkdown(record: ScaleRecord): string {
  const peak = record.peakDatabaseBytes === null ? '' : `; peak ${(record.peakDatabaseBytes / 2 ** 30).toFixed(2)} GB of databases`;
  const blanks = (count: number) => Array.from({ length: count }, () => '');
  const rows: string[][] = [];
  for (const profile of record.profiles) {
    if (profile.steps.length === 0) {
      rows.push([profile.profile, `${profile.status}: ${profile.reason ?? 'no size was measured'}`, ...blanks(LATENCIES.length + 2)]);
      continue;
    }
    profile.steps.forEach((step, i) => {
      rows.push([
        i === 0 ? profile.profile : '',
        size(step.label),
        ...LATENCIES.map(({ key }) => ms(step.latencyMs[key])),
        `${Math.round(step.ingestPerS / 1000)}k/s`,
        `${step.bytesPerReading.toFixed(1)} B`,
      ]);
    });
    const ratios = profile.ratios;
    if (ratios) {
      const judged = (measure: string, ratio: number) => {
        const verdict = record.targets.find((target) => target.profile === profile.profile && target.measure === measure)?.verdict;
        return `${ratio.toFixed(2)}x${verdict === 'miss' ? ', missed' : ''}`;
      };
      rows.push([
        '',
        `${size(ratios.of)} / 1 M${ratios.against === 'beside' ? ' beside it' : ''}`,
        ...LATENCIES.map(({ key }) => judged(key, ratios.latency[key])),
        judged('ingest', ratios.ingest),
        '',
      ]);
    }
    if (profile.status === 'failed') rows.push(['', `failed: ${profile.reason ?? ''}`, ...blanks(LATENCIES.length + 2)]);
  }
  const curve = table(['profile', 'size', ...LATENCIES.map((latency) => latency.title), 'live ingest', 'bytes a reading'], rows);
  return [caption(record, `\`npm run bench -- --scale\` (up to ${size(record.max)})`, peak, [scaleVerdicts(record)], ''), curve].join(
    '\n\n',
  );
}

/** `npm run bench -- --soak`: the caption with the P14 verdict, and a row per check. */
export function soakFiguresMarkdown(record: SoakRecord): string {
  const target = record.targets[0];
  const command = `\`npm run bench -- --soak ${record.minutes}\` (${record.rate} requests/s of the mixed scenario, ${record.profile} profile, 2 workers)`;
  const verdict = `P14 ${target ? VERDICT[target.verdict] : 'NOT MEASURED'}; the first and the last ${record.windowMinutes.toFixed(1)} minutes compared.`;
  const rows = record.checks.map((check) => [check.id, check.pass ? 'PASS' : 'MISSED', check.figure]);
  return [
    caption(record, command, '', [verdict], ' shared by the cluster, PostgreSQL, Redis and the load generator'),
    table(['check', 'verdict', 'measured'], rows),
  ].join('\n\n');
}

/** The marker pair of each kind's section in docs/benchmarks.md. */
export const SECTIONS = { load: 'latest-figures', scale: 'scale-figures', soak: 'soak-figures' } as const;

const render = (record: RunRecord) =>
  record.kind === 'load'
    ? loadFiguresMarkdown(record)
    : record.kind === 'scale'
      ? scaleFiguresMarkdown(record)
      : soakFiguresMarkdown(record);

/** Each section the history has a complete run for, rendered from its newest such line. */
export const renderSections = (records: RunRecord[]) =>
  (['load', 'scale', 'soak'] as const).flatMap((kind) => {
    const newest = newestComplete(records, kind);
    return newest ? [{ kind, name: SECTIONS[kind], body: render(newest) }] : [];
  });

/** The text between a marker pair replaced by `body`; throws when the pair is missing, repeated or out of order. */
export function replaceBetweenMarkers(text: string, name: string, body: string): string {
  const start = `<!-- bench:${name}:start -->`;
  const end = `<!-- bench:${name}:end -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from || text.indexOf(start, from + 1) >= 0 || text.indexOf(end, to + 1) >= 0) {
    throw new Error(`${BENCHMARKS_DOC} needs exactly one ${start} followed by one ${end}`);
  }
  return `${text.slice(0, from + start.length)}\n${body}\n${text.slice(to)}`;
}

/** What is between a marker pair now (without the newlines next to the markers), or null. */
export const betweenMarkers = (text: string, name: string) =>
  new RegExp(`<!-- bench:${name}:start -->\\n([\\s\\S]*?)\\n<!-- bench:${name}:end -->`).exec(text)?.[1] ?? null;

/** The sections whose text between the markers is not what the history renders (hand-edited, or never regenerated). */
export const staleSections = (docText: string, records: RunRecord[]) =>
  renderSections(records)
    .filter((section) => betweenMarkers(docText, section.name) !== section.body)
    .map((section) => section.name);

/** The doc with its tables rendered from the history (bench/publish.ts, and every --publish). */
export const renderDoc = (docText: string, records: RunRecord[]) =>
  renderSections(records).reduce((text, section) => replaceBetweenMarkers(text, section.name, section.body), docText);
