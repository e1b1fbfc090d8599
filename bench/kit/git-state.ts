// What git says about the checkout a run measures: HEAD, and the tracked files that differ from it
// (the files --publish writes left out: they are not what is measured). Read-only git.
import { execFileSync } from 'node:child_process';
import { PUBLISHED_FILES } from './publish-paths.js';
import { repoRoot } from './repo-root.js';

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

// read when the kit is loaded, at the start of a run: a run takes up to half an hour, and a
// commit made meanwhile is not what was measured
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
