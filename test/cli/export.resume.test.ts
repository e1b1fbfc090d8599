// An export that dies half-way (SIGKILL at any instant, or at the worst one: a page in the file and
// not yet in the checkpoint), or is interrupted with Ctrl-C, continues when the same command runs
// again, and the files end up byte for byte those of an export that never stopped: no record
// missing, none twice. The command runs as a child process, as a partner runs it.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { CHECKPOINT_FILE } from '@coldtrack/client/export';
import { runExport } from '../client/run-export.js';
import { createExportWorld, databaseHourly, fileRecords, YEAR, unitFilesIn } from '../client/world.js';

const world = await createExportWorld(t);
const root = await mkdtemp(join(tmpdir(), 'coldtrack-resume-'));
t.teardown(() => rm(root, { recursive: true, force: true }));
// page by page: the crashes land between pages (export.bulk.test.ts kills a bulk export between slices)
const args = (dir: string, extra: string[] = []) => [
  '--from',
  YEAR.from,
  '--to',
  YEAR.to,
  '--aggregation',
  'hourly',
  '--method',
  'pages',
  '--out',
  dir,
  ...extra,
];
const unitFiles = unitFilesIn;

interface CheckpointView {
  complete: boolean;
  units: Record<string, { file: string; bytes: number; records: number; done: boolean; skipped?: string }>;
}
const checkpointOf = (dir: string): CheckpointView | null => {
  try {
    return JSON.parse(readFileSync(join(dir, CHECKPOINT_FILE), 'utf8')) as CheckpointView;
  } catch {
    return null;
  }
};
const recordsIn = (dir: string) => Object.values(checkpointOf(dir)?.units ?? {}).reduce((sum, unit) => sum + unit.records, 0);

const reference = join(root, 'reference');
t.test('an export that never stopped (the reference) equals the database', async (t) => {
  const run = await runExport(world, args(reference));
  t.equal(run.code, 0, run.stderr);
  for (const id of world.unitIds) {
    const file = fileRecords(join(reference, `cooling-unit-${id}.csv`), 'csv');
    t.same({ count: file.count, checksum: file.checksum }, await databaseHourly(world.db, id), `unit ${id}`);
  }
});

function sameAsReference(t: Test, dir: string) {
  t.same(unitFiles(dir), unitFiles(reference), 'the same files');
  for (const name of unitFiles(reference)) {
    t.ok(readFileSync(join(dir, name)).equals(readFileSync(join(reference, name))), `${name}: byte for byte the reference`);
  }
}

t.test('SIGKILL in the middle, then the same command: the same files', async (t) => {
  const dir = join(root, 'killed');
  // small pages: many checkpoints, so the kill lands in the middle
  const extra = ['--page-size', '200', '--concurrency', '3'];
  let killedAt = 0;
  const killed = runExport(world, args(dir, extra));
  const watcher = setInterval(() => {
    const records = recordsIn(dir);
    if (records >= 10_000 && killedAt === 0) {
      killedAt = records;
      // the child is the only process exporting into dir: the lock names it
      const pid = Number(readFileSync(join(dir, 'export.lock'), 'utf8'));
      process.kill(pid, 'SIGKILL');
    }
  }, 5);
  const first = await killed;
  clearInterval(watcher);
  t.equal(first.signal, 'SIGKILL', `killed with ${killedAt} records counted`);
  const partial = checkpointOf(dir)!;
  t.equal(partial.complete, false, 'the checkpoint says incomplete');
  t.ok(recordsIn(dir) < 52_560, `${recordsIn(dir)} of 52,560 records counted`);

  const second = await runExport(world, args(dir, extra));
  t.equal(second.code, 0, second.stderr.trim().split('\n').at(-1) ?? '');
  t.match(second.stderr, /resuming: \d of \d units done, [\d,]+ records already written/);
  // 264 pages of 200 in all (88 a unit), plus the deleted unit's 404
  t.ok(
    second.requests < 265 - Math.floor(killedAt / 200) + 3,
    `the second run fetched only what was left (${second.requests} requests; the first made ${first.requests})`,
  );
  sameAsReference(t, dir);
});

t.test('killed each time between a page reaching its file and the checkpoint counting it, until done: the same files', async (t) => {
  const dir = join(root, 'crashing');
  const runs: string[] = [];
  let truncations = 0;
  for (let attempt = 1; attempt <= 20; attempt++) {
    const run = await runExport(world, args(dir), { env: { COLDTRACK_EXPORT_TEST_KILL_AFTER_PAGES: '10' } });
    if (run.code === 0) {
      runs.push('complete');
      break;
    }
    t.equal(run.signal, 'SIGKILL', `run ${attempt} died by SIGKILL`);
    runs.push(`killed with ${recordsIn(dir)} records counted`);
    // the page written after the last checkpoint is in a file, beyond the length counted
    const checkpoint = checkpointOf(dir)!;
    const longer = Object.values(checkpoint.units).filter(
      (unit) => (statSync(join(dir, unit.file), { throwIfNoEntry: false })?.size ?? 0) > unit.bytes,
    );
    if (longer.length > 0) truncations++;
  }
  t.equal(runs.at(-1), 'complete', `completed after ${runs.length} runs: ${runs.join('; ')}`);
  t.ok(runs.length >= 5, 'several runs were killed on the way (10 pages each, 54 pages in all)');
  t.ok(truncations >= 4, `${truncations} times a file held a page the checkpoint did not count (cut off on resume)`);
  sameAsReference(t, dir);
});

t.test(
  'Ctrl-C: stops after the pages being written (exit 130) with one line saying how to continue, and the same command finishes',
  async (t) => {
    const dir = join(root, 'interrupted');
    const extra = ['--page-size', '100', '--concurrency', '2'];
    let sent = false;
    let stderrAtSignal = 0;
    let stderrSoFar = '';
    const interrupted = runExport(world, args(dir, extra), { onStderr: (text) => (stderrSoFar = text) });
    const watcher = setInterval(() => {
      if (!sent && recordsIn(dir) >= 5_000) {
        sent = true;
        stderrAtSignal = stderrSoFar.length;
        process.kill(Number(readFileSync(join(dir, 'export.lock'), 'utf8')), 'SIGINT');
      }
    }, 5);
    const stopped = await interrupted;
    clearInterval(watcher);
    t.equal(stopped.code, 130, 'exit 130');
    const after = stopped.stderr
      .slice(stderrAtSignal)
      .split('\n')
      .filter((line) => line.trim() !== '');
    t.equal(after.length, 1, `one line after Ctrl-C: ${JSON.stringify(after)}`);
    t.match(after[0], /^export interrupted: [\d,]+ records safely in .*; to continue, run the same command again: coldtrack-export /);
    t.ok(
      after[0]!.endsWith(['--base-url', world.relay.url, ...args(dir, extra)].join(' ')),
      "the line ends with the command's own arguments",
    );
    // the pages being written when the signal came reached their files, and the checkpoint counts them
    const checkpoint = JSON.parse(readFileSync(join(dir, CHECKPOINT_FILE), 'utf8')) as CheckpointView;
    for (const unit of Object.values(checkpoint.units)) {
      t.equal(
        statSync(join(dir, unit.file), { throwIfNoEntry: false })?.size ?? 0,
        unit.bytes,
        `${unit.file}: on disk exactly as the checkpoint counts it`,
      );
    }
    t.notOk(readdirSync(dir).includes('export.lock'), 'the lock is released');
    const resumed = await runExport(world, args(dir, extra));
    t.equal(resumed.code, 0, resumed.stderr.trim().split('\n').at(-1) ?? '');
    sameAsReference(t, dir);
  },
);

t.test('a re-run with other parameters does not touch the directory', async (t) => {
  const run = await runExport(world, args(reference, ['--format', 'ndjson']));
  t.equal(run.code, 2);
  t.match(run.stderr, /holds another export: its format \("csv" there, "ndjson" now\) differ/);
  t.equal(run.requests, 0);
});
