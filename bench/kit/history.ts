// The run logs, one JSON line a run (run-record.ts): bench/results/runs.jsonl for every run
// (git-ignored) and bench/history.jsonl for the published ones (tracked). Lines are only ever
// appended; the newest line of a kind is the last one. runs.jsonl also holds the loadtests' lines
// (kind 'loadtest', loadtest-record.ts), which are never published.
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { LoadtestRecord } from './loadtest-record.js';
import type { RunRecord } from './run-record.js';

export function appendRecord(path: string, record: RunRecord | LoadtestRecord): void {
  mkdirSync(dirname(path), { recursive: true });
  appendFileSync(path, `${JSON.stringify(record)}\n`);
}

/** Every line of a log, in order; a line that is not a run record stops it, naming the line. */
export function readRecords(path: string): RunRecord[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .flatMap((line, index) => {
      if (line.trim() === '') return [];
      let parsed: Partial<RunRecord>;
      try {
        parsed = JSON.parse(line) as Partial<RunRecord>;
      } catch (error) {
        throw new Error(`${path}:${index + 1}: not JSON (${(error as Error).message})`, { cause: error });
      }
      if (
        parsed.record !== 1 ||
        (parsed.kind !== 'load' && parsed.kind !== 'scale' && parsed.kind !== 'soak') ||
        typeof parsed.date !== 'string' ||
        !Array.isArray(parsed.targets)
      ) {
        throw new Error(`${path}:${index + 1}: not a run record of this kit (record 1, kind load, scale or soak, a date and targets)`);
      }
      return [parsed as RunRecord];
    });
}

/** The last complete (not partial) line of a kind: what the docs show. */
export function newestComplete<Kind extends RunRecord['kind']>(
  records: RunRecord[],
  kind: Kind,
): Extract<RunRecord, { kind: Kind }> | null {
  const found = records.findLast((record) => record.kind === kind && record.partial.length === 0);
  return (found as Extract<RunRecord, { kind: Kind }> | undefined) ?? null;
}
