// --publish takes only a complete run of a clean checkout (exit 2 with one line otherwise), and a
// publish appends the run's line to the history and rewrites only the doc's
// section between its markers, or, when it cannot, writes nothing. Real git, in scratch
// repositories.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t from 'tap';
import { betweenMarkers, loadFiguresMarkdown, replaceBetweenMarkers, scaleFiguresMarkdown } from '../../bench/kit/figures-markdown.js';
import { BENCHMARKS_DOC, HISTORY, repoRoot, treeState } from '../../bench/kit/checkout.js';
import { newestComplete, readRecords } from '../../bench/kit/run-record.js';
import { publishRefusal, publishRun, treeRefusal } from '../../bench/kit/publish.js';
import { readRunOptions } from '../../bench/kit/run-options.js';
import { clean, loadRecord, scaleRecord } from './run-fixtures.js';

const scratch = mkdtempSync(join(tmpdir(), 'coldtrack-publish-'));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
let scratchCount = 0;

/** A directory holding the repository's doc and history (and, with git, a first commit of them and a source file). */
function checkout(withGit: boolean): string {
  const root = join(scratch, `checkout-${++scratchCount}`);
  for (const file of [BENCHMARKS_DOC, HISTORY]) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    copyFileSync(join(repoRoot, file), join(root, file));
  }
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'src/app.ts'), 'export {};\n');
  if (withGit) {
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@example.com', ...args], { cwd: root, stdio: 'ignore' });
    git('init', '-q');
    git('add', '.');
    git('commit', '-q', '-m', 'first');
  }
  return root;
}

t.test('--publish on the command line: only for a complete run', async (t) => {
  t.match(readRunOptions(['--publish']), { publish: true, partial: [] });
  t.match(readRunOptions(['--only', 'small-page,revocation']), { publish: false, partial: ['--only small-page,revocation'] });
  t.match(readRunOptions(['--scale', '--publish']), { publish: true, partial: [] });
  t.match(readRunOptions(['--scale', '--profile', 'postgres']), { partial: ['--profile postgres'] });
  t.throws(() => readRunOptions(['--quick', '--publish']), /--publish takes a complete run, not one with --quick$/);
  t.throws(() => readRunOptions(['--quick', '--only', 'small-page', '--publish']), /not one with --quick and --only small-page$/);
  t.throws(() => readRunOptions(['--scale', '--scale-max', '10M', '--publish']), /not one with --scale-max 10M$/);
});

t.test('a checkout is clean when only what --publish writes has changed', async (t) => {
  const root = checkout(true);
  const start = treeState(root);
  t.match(start.head, /^[0-9a-f]{40}$/);
  t.same(start.changed, []);
  t.equal(treeRefusal(start), null);

  writeFileSync(join(root, BENCHMARKS_DOC), 'prose edited before publishing\n', { flag: 'a' });
  writeFileSync(join(root, HISTORY), '', { flag: 'a' });
  writeFileSync(join(root, 'src/untracked.ts'), 'export {};\n');
  t.equal(treeRefusal(treeState(root)), null, 'the doc, the history and untracked files do not count');

  writeFileSync(join(root, 'src/app.ts'), 'export const changed = 1;\n');
  const dirty = treeState(root);
  t.same(dirty.changed, ['src/app.ts']);
  t.equal(treeRefusal(dirty), 'uncommitted changes to src/app.ts: commit or stash them first, so the figures name a real commit');

  execFileSync('git', ['add', 'src/untracked.ts'], { cwd: root });
  t.same(treeState(root).changed, ['src/app.ts', 'src/untracked.ts'], 'a staged new file counts');

  const notGit = join(scratch, 'not-git');
  mkdirSync(notGit);
  t.match(treeRefusal(treeState(notGit)), /not a git checkout/);
});

t.test('a run is refused when partial, moved or dirty', async (t) => {
  const root = checkout(true);
  const now = treeState(root);
  const record = loadRecord([], { ...clean, hash: now.head });
  t.equal(publishRefusal(record, now), null);
  t.match(publishRefusal({ ...record, partial: ['--quick'] }, now), /^a partial run \(--quick\) is not published$/);
  t.match(
    publishRefusal({ ...record, commit: { ...record.commit, movedTo: 'fedcba9876543210' } }, now),
    /^HEAD moved from [0-9a-f]{7} to fedcba9 during the run$/,
  );
  t.match(publishRefusal({ ...record, commit: { ...record.commit, dirty: true } }, now), /uncommitted changes when the run started/);
  writeFileSync(join(root, 'src/app.ts'), 'export const changed = 1;\n');
  t.match(publishRefusal(record, treeState(root)), /^uncommitted changes to src\/app\.ts/, 'changed since the run started');
});

t.test('a publish appends the line and rewrites only its own section', async (t) => {
  const root = checkout(false);
  const target = { history: join(root, HISTORY), doc: join(root, BENCHMARKS_DOC) };
  const docBefore = readFileSync(target.doc, 'utf8');
  const historyBefore = readFileSync(target.history, 'utf8');
  const record = loadRecord();
  const written = publishRun(record, root);
  t.same(written, [target.history, target.doc]);
  const history = readFileSync(target.history, 'utf8');
  t.equal(history, `${historyBefore}${JSON.stringify(record)}\n`, 'one line appended, nothing else changed');

  const doc = readFileSync(target.doc, 'utf8');
  t.equal(betweenMarkers(doc, 'latest-figures'), loadFiguresMarkdown(record));
  t.equal(
    betweenMarkers(doc, 'scale-figures'),
    betweenMarkers(docBefore, 'scale-figures'),
    'the scale section still shows the newest scale line',
  );
  const outside = (text: string) => text.replace(/<!-- bench:latest-figures:start -->[\s\S]*<!-- bench:latest-figures:end -->/, '');
  t.equal(outside(doc), outside(docBefore), 'the prose around the markers is untouched');

  const scale = scaleRecord();
  publishRun(scale, root);
  const after = readFileSync(target.doc, 'utf8');
  t.equal(betweenMarkers(after, 'scale-figures'), scaleFiguresMarkdown(scale));
  t.equal(betweenMarkers(after, 'latest-figures'), loadFiguresMarkdown(record));
  t.same(newestComplete(readRecords(target.history), 'load'), record, 'the history reads back the line published');
});

t.test('a doc without its markers: nothing is written', async (t) => {
  const root = checkout(false);
  const target = { history: join(root, HISTORY), doc: join(root, BENCHMARKS_DOC) };
  writeFileSync(target.doc, readFileSync(target.doc, 'utf8').replace('<!-- bench:latest-figures:end -->', ''));
  const historyBefore = readFileSync(target.history, 'utf8');
  t.throws(
    () => publishRun(loadRecord(), root),
    /needs exactly one <!-- bench:latest-figures:start --> followed by one <!-- bench:latest-figures:end -->/,
  );
  t.equal(readFileSync(target.history, 'utf8'), historyBefore, 'the history is unchanged');

  t.throws(
    () => replaceBetweenMarkers('<!-- bench:x:start -->\n<!-- bench:x:end -->\n<!-- bench:x:start -->\n<!-- bench:x:end -->', 'x', 'y'),
    /exactly one/,
  );
  t.equal(
    replaceBetweenMarkers('a\n<!-- bench:x:start -->\nold\n<!-- bench:x:end -->\nb', 'x', 'new'),
    'a\n<!-- bench:x:start -->\nnew\n<!-- bench:x:end -->\nb',
  );
});
