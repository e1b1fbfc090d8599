// The end of every run: its line in bench/results/runs.jsonl; published, also in bench/history.jsonl,
// and docs/benchmarks.md's tables rendered again from the history (bench/publish.ts does it without a run).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadFiguresMarkdown, scaleFiguresMarkdown, soakFiguresMarkdown } from './figures-markdown.js';
import { BENCHMARKS_DOC, HISTORY, repoRoot, RUNS_LOG, shortHash, treeState, type TreeState } from './checkout.js';
import { appendRecord, newestComplete, readRecords, type RunRecord } from './run-record.js';

/** The tracked files a publish writes, under a root (the repository's; a scratch copy in tests). */
export interface PublishTarget {
  history: string;
  doc: string;
}

export const publishTargetIn = (root: string): PublishTarget => ({
  history: join(root, HISTORY),
  doc: join(root, BENCHMARKS_DOC),
});

/** The marker pair of each kind's section in docs/benchmarks.md. */
export const SECTIONS: Record<RunRecord['kind'], string> = { load: 'latest-figures', scale: 'scale-figures', soak: 'soak-figures' };

/** Why the checkout cannot be published from (at the start of a run, and again at its end), or null. */
export function treeRefusal(state: TreeState): string | null {
  if (state.head === null) return 'this is not a git checkout, so the figures would name no commit';
  if (state.changed.length === 0) return null;
  const named = state.changed.slice(0, 3).join(', ') + (state.changed.length > 3 ? ` and ${state.changed.length - 3} more` : '');
  return `uncommitted changes to ${named}: commit or stash them first, so the figures name a real commit`;
}

/** Why this run's record cannot be published, or null. */
export function publishRefusal(record: RunRecord, now: TreeState): string | null {
  if (record.partial.length > 0) return `a partial run (${record.partial.join('; ')}) is not published`;
  if (record.commit.movedTo !== null)
    return `HEAD moved from ${shortHash(record.commit.hash)} to ${shortHash(record.commit.movedTo)} during the run`;
  return treeRefusal(now) ?? (record.commit.dirty ? 'tracked files had uncommitted changes when the run started' : null);
}

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
export function betweenMarkers(text: string, name: string): string | null {
  const match = new RegExp(`<!-- bench:${name}:start -->\\n([\\s\\S]*?)\\n<!-- bench:${name}:end -->`).exec(text);
  return match ? match[1]! : null;
}

/** Each section the history has a complete run for, rendered from its newest such line. */
export function renderSections(records: RunRecord[]): { kind: RunRecord['kind']; name: string; body: string }[] {
  const load = newestComplete(records, 'load');
  const scale = newestComplete(records, 'scale');
  const soak = newestComplete(records, 'soak');
  return [
    ...(load ? [{ kind: 'load' as const, name: SECTIONS.load, body: loadFiguresMarkdown(load) }] : []),
    ...(scale ? [{ kind: 'scale' as const, name: SECTIONS.scale, body: scaleFiguresMarkdown(scale) }] : []),
    ...(soak ? [{ kind: 'soak' as const, name: SECTIONS.soak, body: soakFiguresMarkdown(soak) }] : []),
  ];
}

/** The sections whose text between the markers is not what the history renders (hand-edited, or never regenerated). */
export function staleSections(docText: string, records: RunRecord[]): string[] {
  return renderSections(records)
    .filter((section) => betweenMarkers(docText, section.name) !== section.body)
    .map((section) => section.name);
}

/** The doc with its tables rendered from the history (bench/publish.ts, and every --publish). */
export function renderDoc(docText: string, records: RunRecord[]): string {
  return renderSections(records).reduce((text, section) => replaceBetweenMarkers(text, section.name, section.body), docText);
}

/** Appends the record to the history and rewrites the doc; returns the files written. */
export function publishRun(record: RunRecord, target: PublishTarget = publishTargetIn(repoRoot)): string[] {
  // everything that can refuse is read before anything is written
  const doc = readFileSync(target.doc, 'utf8');
  const records = [...readRecords(target.history), record];
  const rendered = renderDoc(doc, records);
  appendRecord(target.history, record);
  writeFileSync(target.doc, rendered);
  return [target.history, target.doc];
}

/**
 * The end of every run: its line in runs.jsonl; with --publish, the history and the doc too,
 * unless refused (one line on stderr, exit code 2).
 */
export function recordRun(record: RunRecord, publish: boolean): void {
  appendRecord(join(repoRoot, RUNS_LOG), record);
  console.log(`\nrecord: ${RUNS_LOG} (this run's line appended)`);
  if (!publish) return;
  const refusal = publishRefusal(record, treeState());
  if (refusal) {
    console.error(`npm run bench: not published: ${refusal}`);
    process.exitCode = 2;
    return;
  }
  const written = publishRun(record).map((path) => path.slice(repoRoot.length));
  console.log(`\npublished: ${written.join(', ')}\n  commit them on their own: git commit -m "Bench: ..." -- ${written.join(' ')}`);
}
