// The end of every run: its line in bench/results/runs.jsonl; published, also in bench/history.jsonl,
// and docs/benchmarks.md's tables rendered again from the history (bench/publish.ts does it without a run).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderDoc } from './figures-markdown.js';
import { BENCHMARKS_DOC, HISTORY, repoRoot, RUNS_LOG, shortHash, treeState, type TreeState } from './checkout.js';
import { appendRecord, readRecords, type RunRecord } from './run-record.js';

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

/** Appends the record to the history and rewrites the doc, under `root` (a scratch copy in tests); returns the files written. */
export function publishRun(record: RunRecord, root = repoRoot): string[] {
  const [history, doc] = [join(root, HISTORY), join(root, BENCHMARKS_DOC)];
  // everything that can refuse is read before anything is written
  const rendered = renderDoc(readFileSync(doc, 'utf8'), [...readRecords(history), record]);
  appendRecord(history, record);
  writeFileSync(doc, rendered);
  return [history, doc];
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
