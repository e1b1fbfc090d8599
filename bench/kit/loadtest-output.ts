// What a loadtest leaves in --out (default bench/results/, git-ignored): loadtest-<start>.json,
// loadtest-latest.json and its line appended to runs.jsonl (kind 'loadtest').
// Nothing is published, and no file holds a token or the JWT.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { appendRecord } from './history.js';
import { loadtestRecord } from './loadtest-record.js';
import type { LoadtestReport } from './loadtest-report.js';

export function writeLoadtestOutput(report: LoadtestReport, outDir: string): { json: string; runs: string } {
  mkdirSync(outDir, { recursive: true });
  const stamp = report.startedAt.replace(/[:]/g, '-').replace(/\.\d+Z$/, 'Z');
  const json = `${JSON.stringify(report, null, 2)}\n`;
  const paths = {
    json: join(outDir, `loadtest-${stamp}.json`),
    runs: join(outDir, 'runs.jsonl'),
  };
  writeFileSync(paths.json, json);
  writeFileSync(join(outDir, 'loadtest-latest.json'), json);
  appendRecord(paths.runs, loadtestRecord(report));
  return paths;
}
