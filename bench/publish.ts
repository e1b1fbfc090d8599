// docs/benchmarks.md's tables rendered again from the history's newest complete line of each kind,
// no run (after changing kit/figures-markdown.ts). --check writes nothing and exits 1 when they differ.
//   node --import tsx bench/publish.ts [--from bench/history.jsonl] [--check]
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { BENCHMARKS_DOC, HISTORY, repoRoot } from './kit/checkout.js';
import { renderDoc, renderSections, staleSections } from './kit/figures-markdown.js';
import { readRecords } from './kit/run-record.js';

let values: { from?: string; check?: boolean };
try {
  ({ values } = parseArgs({ options: { from: { type: 'string' }, check: { type: 'boolean', default: false } } }));
} catch (error) {
  console.error(`bench/publish.ts: ${(error as Error).message}`);
  process.exit(2);
}

const history = values.from ? resolve(values.from) : join(repoRoot, HISTORY);
const docPath = join(repoRoot, BENCHMARKS_DOC);
const records = readRecords(history);
const sections = renderSections(records);
if (sections.length === 0) {
  console.error(`bench/publish.ts: ${history} has no complete run to render`);
  process.exit(1);
}
const doc = readFileSync(docPath, 'utf8');
const from = `${sections.map((section) => `${section.name} from the ${section.kind} run`).join(', ')} in ${history}`;
const stale = staleSections(doc, records);
if (values.check && stale.length > 0) {
  console.error(
    `${BENCHMARKS_DOC}: ${stale.join(' and ')} differ from what ${history} renders; regenerate with node --import tsx bench/publish.ts`,
  );
  process.exit(1);
} else if (values.check) {
  console.log(`${BENCHMARKS_DOC} matches ${from}`);
} else {
  writeFileSync(docPath, renderDoc(doc, records));
  console.log(`${BENCHMARKS_DOC}: ${stale.length === 0 ? 'unchanged' : 'rewritten'} (${from})`);
}
