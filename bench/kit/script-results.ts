// A script's own output file: what a bench script outside `npm run bench`'s report measured
// (sensor scripts, P10 analytics-scale, P11 compression, P5 event-loop), kept in bench/results/
// (git-ignored) beside the run reports, so that its figures are found in a file the script wrote
// rather than copied by hand into the docs. One JSON file a run, and its line in SCRIPTS_LOG.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { basename, join } from 'node:path';
import { commitMeasured } from './git-state.js';
import { repoRoot } from './repo-root.js';

/** Every script run's line: git-ignored, like bench/results/runs.jsonl. */
export const SCRIPTS_LOG = 'bench/results/scripts.jsonl';

/**
 * Writes bench/results/<script>-<time>.json with `result`, the command line, the commit measured
 * and the load average, appends the same as one line to SCRIPTS_LOG, and returns the file's path
 * relative to the repository.
 */
export function saveScriptResult(result: Record<string, unknown>, script = basename(process.argv[1] ?? 'script', '.ts')): string {
  const at = new Date();
  const record = {
    script,
    date: at.toISOString(),
    args: process.argv.slice(2),
    commit: commitMeasured(),
    loadAverage: loadavg().map((value) => Number(value.toFixed(2))),
    ...result,
  };
  const file = join('bench/results', `${script}-${at.toISOString().replace(/[:.]/g, '-')}.json`);
  mkdirSync(join(repoRoot, 'bench/results'), { recursive: true });
  writeFileSync(join(repoRoot, file), `${JSON.stringify(record, null, 2)}\n`);
  appendFileSync(join(repoRoot, SCRIPTS_LOG), `${JSON.stringify(record)}\n`);
  return file;
}
