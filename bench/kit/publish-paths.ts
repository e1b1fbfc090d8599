// Where a run's record and the published figures live, relative to the repository's root: the
// run log every run appends to (git-ignored, under bench/results/ with the rest of a run's files)
// and the tracked files that only `--publish` (and bench/publish.ts) write.

/** Every run's line (run-record.ts), release, --quick, --only and --scale alike: git-ignored. */
export const RUNS_LOG = 'bench/results/runs.jsonl';

/**
 * The published runs' lines, tracked. Beside bench/results/ rather than in it: that folder is
 * what a run leaves, all of it ignored, and may be emptied at will; a git-ignore exception in it
 * would make one file there precious.
 */
export const HISTORY = 'bench/history.jsonl';

/** The doc whose tables between `<!-- bench:...:start/end -->` markers are rendered from the history. */
export const BENCHMARKS_DOC = 'docs/benchmarks.md';

/** What `--publish` may change: uncommitted changes to these do not make a checkout dirty. */
export const PUBLISHED_FILES: readonly string[] = [HISTORY, BENCHMARKS_DOC];
