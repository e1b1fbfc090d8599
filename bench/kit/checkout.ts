// The checkout a run measures and writes into: its root, the run logs, what git says about HEAD
// and uncommitted changes, and a script's line in bench/results/scripts.jsonl.
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root directory: where the kit runs npm, git and its child processes. */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Every run's line (run-record.ts), partial runs too: git-ignored, like all of bench/results/. */
export const RUNS_LOG = 'bench/results/runs.jsonl';
/** The published runs' lines, tracked: outside bench/results/, which may be emptied at will. */
export const HISTORY = 'bench/history.jsonl';
/** The doc whose tables between `<!-- bench:...:start/end -->` markers are rendered from the history. */
export const BENCHMARKS_DOC = 'docs/benchmarks.md';

/** What `--publish` may change: uncommitted changes to these do not make a checkout dirty. */
export const PUBLISHED_FILES: readonly string[] = [HISTORY, BENCHMARKS_DOC];

/** HEAD, and the tracked files that differ from it (the files --publish writes left out: they are not what is measured). */
export interface TreeState {
  /** HEAD's full hash; null outside a git checkout */
  head: string | null;
  /** tracked files with uncommitted changes, staged or not (paths from the repository's root) */
  changed: string[];
}

function git(root: string, args: string[]): string | null {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

export function treeState(root = repoRoot, published: readonly string[] = PUBLISHED_FILES): TreeState {
  const head = git(root, ['rev-parse', '--verify', '--quiet', 'HEAD']);
  if (!head) return { head: null, changed: [] };
  const changed = (git(root, ['-c', 'diff.relative=false', 'diff', '--name-only', '--no-renames', 'HEAD', '--']) ?? '')
    .split('\n')
    .filter((path) => path !== '' && !published.includes(path));
  return { head, changed };
}

// at the start of a run: a commit made during it is not what was measured
export const STATE_AT_START = treeState();

export interface CommitFacts {
  /** HEAD when the run started (full hash); null outside a git checkout */
  hash: string | null;
  /** tracked files differed from it at the start or at the end; null: not recorded (imported figures) */
  dirty: boolean | null;
  /** where HEAD had gone by the end of the run, when it moved */
  movedTo: string | null;
}

export function commitOfRun(start: TreeState = STATE_AT_START, end: TreeState = treeState()): CommitFacts {
  return {
    hash: start.head,
    dirty: start.changed.length > 0 || end.changed.length > 0,
    movedTo: end.head === start.head ? null : end.head,
  };
}

export const shortHash = (hash: string | null) => (hash ? hash.slice(0, 7) : 'unknown');

/** The commit measured, in words, for the reports: HEAD at the start, marked when dirty or moved. */
export function commitMeasured(facts: CommitFacts = commitOfRun()): string {
  return (
    shortHash(facts.hash) +
    (facts.dirty ? ' (with uncommitted changes)' : '') +
    (facts.movedTo ? ` (HEAD moved to ${shortHash(facts.movedTo)} during the run)` : '')
  );
}

/** A script's line (the sensor scripts, analytics-scale, generic-plans): its figures, found where it wrote them. */
export const SCRIPTS_LOG = 'bench/results/scripts.jsonl';

/** Appends `result` with the script, its command line, the commit and the load average to SCRIPTS_LOG; returns SCRIPTS_LOG. */
export function saveScriptResult(result: Record<string, unknown>, script = basename(process.argv[1] ?? 'script', '.ts')): string {
  const record = {
    script,
    date: new Date().toISOString(),
    args: process.argv.slice(2),
    commit: commitMeasured(),
    loadAverage: loadavg().map((value) => Number(value.toFixed(2))),
    ...result,
  };
  mkdirSync(join(repoRoot, 'bench/results'), { recursive: true });
  appendFileSync(join(repoRoot, SCRIPTS_LOG), `${JSON.stringify(record)}\n`);
  return SCRIPTS_LOG;
}
