// What a loadtest leaves in --out (default bench/results/, git-ignored): loadtest-<start>.json and
// .html, loadtest-latest.json and .html, and its line appended to runs.jsonl (kind 'loadtest').
// Nothing is published, and no file holds a token or the JWT.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { appendRecord } from './history.js';
import { renderLoadtestHtml } from './loadtest-html.js';
import { loadtestRecord } from './loadtest-record.js';
import type { LoadtestReport } from './loadtest-report.js';

export function writeLoadtestOutput(report: LoadtestReport, outDir: string): { json: string; html: string; runs: string } {
  mkdirSync(outDir, { recursive: true });
  const stamp = report.startedAt.replace(/[:]/g, '-').replace(/\.\d+Z$/, 'Z');
  const json = `${JSON.stringify(report, null, 2)}\n`;
  const html = renderLoadtestHtml(report);
  const paths = {
    json: join(outDir, `loadtest-${stamp}.json`),
    html: join(outDir, `loadtest-${stamp}.html`),
    runs: join(outDir, 'runs.jsonl'),
  };
  writeFileSync(paths.json, json);
  writeFileSync(join(outDir, 'loadtest-latest.json'), json);
  writeFileSync(paths.html, html);
  writeFileSync(join(outDir, 'loadtest-latest.html'), html);
  appendRecord(paths.runs, loadtestRecord(report));
  return paths;
}
