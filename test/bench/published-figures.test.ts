// The figures in docs/benchmarks.md are the bench's, not anyone's typing: what stands between each
// pair of bench markers is exactly what bench/publish.ts renders from the newest complete line of
// bench/history.jsonl. A table edited by hand, or a history line published without its tables,
// fails here; regenerate with `node --import tsx bench/publish.ts`.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { BENCHMARKS_DOC, HISTORY, repoRoot } from '../../bench/kit/checkout.js';
import { readRecords } from '../../bench/kit/run-record.js';
import { betweenMarkers, renderSections, SECTIONS, staleSections } from '../../bench/kit/figures-markdown.js';

const records = readRecords(join(repoRoot, HISTORY));
const doc = readFileSync(join(repoRoot, BENCHMARKS_DOC), 'utf8');

t.test('the history: run records, each naming its commit; the figures from before the bench kept them are marked imported', async (t) => {
  t.ok(records.length >= 2);
  for (const [index, record] of records.entries()) {
    t.match(record.commit.hash, /^[0-9a-f]{7,40}$/, `line ${index + 1} names a commit`);
    t.same(record.partial, [], `line ${index + 1} is a complete run: --publish takes no other`);
    t.ok(!Number.isNaN(Date.parse(record.date)), `line ${index + 1} has a date`);
  }
  t.same(
    records.slice(0, 2).map((record) => [record.kind, typeof record.imported]),
    [
      ['load', 'string'],
      ['scale', 'string'],
    ],
  );
  t.ok(
    records.slice(2).every((record) => record.imported === undefined),
    'lines after the first two come from runs',
  );
});

t.test('each section of the doc is what the newest history line renders', async (t) => {
  const sections = renderSections(records);
  const soakPublished = records.some((record) => record.kind === 'soak' && record.partial.length === 0);
  t.same(
    sections.map((section) => section.name),
    [SECTIONS.load, SECTIONS.scale, ...(soakPublished ? [SECTIONS.soak] : [])],
    'the history has a run for the load and scale sections (and the soak section once a soak is published)',
  );
  if (!soakPublished)
    t.equal(betweenMarkers(doc, SECTIONS.soak), 'No soak has been published yet.', 'the soak section says none is published');
  for (const section of sections) {
    t.equal(
      betweenMarkers(doc, section.name),
      section.body,
      `${BENCHMARKS_DOC}, ${section.name}: hand-edited or not regenerated; run node --import tsx bench/publish.ts`,
    );
  }
  t.same(staleSections(doc, records), []);
});

t.test('a hand edit of any rendered table is caught', async (t) => {
  for (const { name } of renderSections(records)) {
    const body = betweenMarkers(doc, name)!;
    const figure = /\d+(\.\d+)?(?= ms| MB|x)/.exec(body)!;
    const edited = body.slice(0, figure.index) + `${Number(figure[0]) + 1}` + body.slice(figure.index + figure[0].length);
    t.not(edited, body);
    t.same(staleSections(doc.replace(body, edited), records), [name], `${name}: one figure changed`);
  }
  t.same(
    staleSections(doc.replace(`<!-- bench:${SECTIONS.scale}:end -->`, `\n<!-- bench:${SECTIONS.scale}:end -->`), records),
    [SECTIONS.scale],
    'even a blank line',
  );
});

t.test('bench/publish.ts --check agrees', async (t) => {
  const output = execFileSync(process.execPath, ['--import', 'tsx', 'bench/publish.ts', '--check'], { cwd: repoRoot, encoding: 'utf8' });
  t.match(output, `${BENCHMARKS_DOC} matches latest-figures from the load run, scale-figures from the scale run`);
});
