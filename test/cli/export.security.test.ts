// The export trusts nothing on disk. Tried as an attacker with write access to --out would (or a
// careless tool): a symbolic link planted at a unit file's or the temporary checkpoint's name, a
// hard link to a file elsewhere, a file the export did not write, a checkpoint whose unit file is
// "../victim.txt": each is refused (exit 2, one line) before a byte is written, and the file
// outside stays as it was. A checkpoint edited by hand (next page, window end, a unit removed,
// byte length, complete: true, last timestamp) never ends "export complete" with a record missing
// or a line merged: a change to the parameters is refused, a unit whose file and entry do not
// match is exported again from the start, so the files end up byte for byte those of an export
// nobody touched. The command runs as a child process against the real service.
import { existsSync, linkSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { CHECKPOINT_FILE, CURSOR_FILE } from '@coldtrack/client/export';
import { type ExportRun, runExport } from '../client/run-export.js';
import { createExportWorld } from '../client/world.js';

const world = await createExportWorld(t);
const root = await mkdtemp(join(tmpdir(), 'coldtrack-export-security-'));
t.teardown(() => rm(root, { recursive: true, force: true }));
const [first, second] = world.unitIds as [number, number];
// January of two units, 500 records a page: 3 pages a unit, one unit at a time
const args = (dir: string, units = `${first},${second}`) => [
  '--from',
  '2025-01-01',
  '--to',
  '2025-01-31',
  '--units',
  units,
  '--page-size',
  '500',
  '--concurrency',
  '1',
  // page by page, also for all units: the cases stop a run between its pages
  '--method',
  'pages',
  '--out',
  dir,
];
const fileOf = (id: number) => `cooling-unit-${id}.csv`;
const VICTIM_TEXT = 'the partner keeps this file\n';

/** Each run with a token of its own: the cases do not wait for one another's rate limit. */
async function exportInto(dir: string, env: Record<string, string> = {}, units?: string): Promise<ExportRun> {
  const { token } = await world.issue({ scopes: ['sensor_data'] });
  return runExport(world, args(dir, units), { token, env });
}

function victimBeside(dir: string): string {
  const victim = join(`${dir}-outside`, 'victim.txt');
  writeFileSync(victim, VICTIM_TEXT);
  return victim;
}

function refusedInOneLine(t: Test, run: ExportRun, reason: RegExp) {
  t.equal(run.code, 2, 'exit 2');
  const lines = run.stderr.trim().split('\n');
  t.equal(lines.length, 1, `one line: ${run.stderr.trim()}`);
  t.match(lines[0], reason);
  t.notMatch(run.stderr, /\n\s+at /, 'no stack trace');
}

const reference = join(root, 'reference');
t.test('the reference: an export nobody touched', async (t) => {
  const run = await exportInto(reference);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stderr, /export complete: 2,976 records in 2 files/);
});

function sameAsReference(t: Test, dir: string) {
  for (const name of [fileOf(first), fileOf(second)]) {
    t.ok(readFileSync(join(dir, name)).equals(readFileSync(join(reference, name))), `${name}: byte for byte the reference`);
  }
  t.same(readdirSync(dir).sort(), [CHECKPOINT_FILE, CURSOR_FILE, fileOf(first), fileOf(second)].sort(), 'nothing else in the folder');
}

/** A folder holding an export killed with one page of the first unit counted and its second written. */
let partials = 0;
async function partialExport(t: Test, units?: string): Promise<string> {
  const dir = join(root, `partial-${++partials}`);
  await mkdir(`${dir}-outside`, { recursive: true });
  const run = await exportInto(dir, { COLDTRACK_EXPORT_TEST_KILL_AFTER_PAGES: '2' }, units);
  t.equal(run.signal, 'SIGKILL', 'the first run was killed after its second page');
  return dir;
}

interface CheckpointJson {
  complete: boolean;
  windows: { start_date: string; end_date: string }[];
  units: Record<string, { file: string; next_page: number; bytes: number; done: boolean; last: { timestamp: string } | null }>;
}
const readCheckpoint = (dir: string) => JSON.parse(readFileSync(join(dir, CHECKPOINT_FILE), 'utf8')) as CheckpointJson;
const writeCheckpoint = (dir: string, checkpoint: CheckpointJson) => writeFileSync(join(dir, CHECKPOINT_FILE), JSON.stringify(checkpoint));

t.test('links and files the export did not write: refused before any request, the target untouched', async (t) => {
  const cases: Array<[string, (dir: string, victim: string) => void, RegExp]> = [
    [
      'a symbolic link at a unit file',
      (dir, victim) => symlinkSync(victim, join(dir, fileOf(first))),
      new RegExp(`holds ${fileOf(first)}, a symbolic link`),
    ],
    [
      'a symbolic link at the temporary checkpoint',
      (dir, victim) => symlinkSync(victim, join(dir, `${CHECKPOINT_FILE}.tmp`)),
      /holds export-checkpoint\.json\.tmp, a symbolic link/,
    ],
    ['a dangling symbolic link', (dir, victim) => symlinkSync(`${victim}.new`, join(dir, fileOf(second))), /a symbolic link/],
    ['a hard link to a file elsewhere', (dir, victim) => linkSync(victim, join(dir, fileOf(first))), /a file with 2 hard links/],
    [
      "a file the export did not write, named like a unit's",
      (dir) => writeFileSync(join(dir, fileOf(first)), 'mine\n'),
      new RegExp(`holds ${fileOf(first)}, which no checkpoint names`),
    ],
    ['any other file', (dir) => writeFileSync(join(dir, 'notes.txt'), 'mine\n'), /holds notes\.txt, a file the export did not write/],
  ];
  for (const [name, plant, reason] of cases) {
    await t.test(name, async (t) => {
      const dir = join(root, name.replaceAll(/\W+/g, '-'));
      await mkdir(dir, { recursive: true });
      await mkdir(`${dir}-outside`, { recursive: true });
      const victim = victimBeside(dir);
      plant(dir, victim);
      const run = await exportInto(dir);
      refusedInOneLine(t, run, reason);
      t.equal(run.requests, 0, 'no request');
      t.equal(readFileSync(victim, 'utf8'), VICTIM_TEXT, 'the file outside is unchanged');
      t.notOk(existsSync(`${victim}.new`), 'nothing created through a dangling link');
      t.notOk(existsSync(join(dir, CHECKPOINT_FILE)), 'no checkpoint written');
    });
  }
});

t.test('planted into a half-done export: refused, the target untouched', async (t) => {
  const cases: Array<[string, (dir: string, victim: string) => void, RegExp]> = [
    [
      "a unit's file replaced by a symbolic link",
      (dir, victim) => {
        const path = join(dir, fileOf(first));
        writeFileSync(victim, readFileSync(path));
        rmSync(path);
        symlinkSync(victim, path);
      },
      /a symbolic link/,
    ],
    [
      'the checkpoint names ../victim.txt as the unit file',
      (dir) => {
        const checkpoint = readCheckpoint(dir);
        checkpoint.units[String(first)]!.file = `../${dir.split('/').at(-1)}-outside/victim.txt`;
        writeCheckpoint(dir, checkpoint);
      },
      /was changed outside the export \(unit \d+ names the file ".*victim\.txt", not cooling-unit-\d+\.csv\)/,
    ],
    [
      'the checkpoint is a symbolic link',
      (dir, victim) => {
        const path = join(dir, CHECKPOINT_FILE);
        writeFileSync(victim, readFileSync(path));
        rmSync(path);
        symlinkSync(victim, path);
      },
      /export-checkpoint\.json is a symbolic link|holds export-checkpoint\.json, a symbolic link/,
    ],
  ];
  for (const [name, plant, reason] of cases) {
    await t.test(name, async (t) => {
      const dir = await partialExport(t);
      const victim = victimBeside(dir);
      plant(dir, victim);
      const before = readFileSync(victim);
      const run = await exportInto(dir);
      refusedInOneLine(t, run, reason);
      t.equal(run.requests, 0, 'no request');
      t.ok(readFileSync(victim).equals(before), 'the file outside is unchanged');
    });
  }
});

/** One digit of a record changed, within the file's first `within` bytes (what the checkpoint counts). */
const changeOneDigit = (path: string, within = Infinity) => {
  const text = readFileSync(path, 'utf8');
  const at = text.lastIndexOf(',', Math.min(text.length, within) - 10) - 1;
  writeFileSync(path, text.slice(0, at) + (text[at] === '1' ? '2' : '1') + text.slice(at + 1));
};

t.test(
  'a checkpoint or file edited by hand: refused with the reason, or the unit exported again; never a record missing or twice',
  async (t) => {
    const refused: Array<[string, (checkpoint: CheckpointJson) => void, RegExp]> = [
      ['window end', (c) => (c.windows[0]!.end_date = '2025-01-15'), /its windows are not those of --from and --to/],
      ['a unit removed', (c) => delete c.units[String(second)], new RegExp(`its units ${first} are not those asked for`)],
    ];
    for (const [name, edit, reason] of refused) {
      await t.test(`${name}: refused`, async (t) => {
        const dir = await partialExport(t);
        const checkpoint = readCheckpoint(dir);
        edit(checkpoint);
        writeCheckpoint(dir, checkpoint);
        const run = await exportInto(dir);
        refusedInOneLine(t, run, reason);
        t.equal(run.requests, 0, 'no request');
      });
    }

    await t.test('a unit removed from an export of all units (its file not yet begun): refused by the seal', async (t) => {
      const dir = await partialExport(t, 'all');
      const checkpoint = readCheckpoint(dir);
      const untouched = Object.keys(checkpoint.units).filter((id) => !existsSync(join(dir, fileOf(Number(id)))));
      t.ok(untouched.length > 0, `units not begun: ${untouched.join(', ')}`);
      delete checkpoint.units[untouched.at(-1)!];
      writeCheckpoint(dir, checkpoint);
      const run = await exportInto(dir, {}, 'all');
      refusedInOneLine(t, run, /was changed outside the export \(its parameters, windows or units do not match its seal\)/);
      t.equal(run.requests, 0, 'no request');
    });

    const redone: Array<[string, (dir: string, checkpoint: CheckpointJson) => void, RegExp]> = [
      ['next page', (_, c) => (c.units[String(first)]!.next_page += 1), /its checkpoint entry does not match its seal/],
      ['byte length', (_, c) => (c.units[String(first)]!.bytes -= 7), /its checkpoint entry does not match its seal/],
      ['last timestamp', (_, c) => (c.units[String(first)]!.last!.timestamp = '2025-01-02T00:00:00.000Z'), /does not match its seal/],
      ['done: true', (_, c) => (c.units[String(first)]!.done = true), /does not match its seal/],
      [
        'the file changed, same length',
        (dir, c) => changeOneDigit(join(dir, fileOf(first)), c.units[String(first)]!.bytes),
        /does not match the SHA-256 counted/,
      ],
      ['the file cut short', (dir) => writeFileSync(join(dir, fileOf(first)), 'timestamp\n'), /fewer than the \d+ counted/],
    ];
    for (const [name, edit, reason] of redone) {
      await t.test(`${name}: the unit exported again from the start`, async (t) => {
        const dir = await partialExport(t);
        const checkpoint = readCheckpoint(dir);
        edit(dir, checkpoint);
        writeCheckpoint(dir, checkpoint);
        const run = await exportInto(dir);
        t.equal(run.code, 0, run.stderr.trim().split('\n').at(-1) ?? '');
        t.match(run.stderr, new RegExp(`cooling unit ${first}: .*${reason.source}.*; exporting it again from the start`));
        t.match(run.stderr, /export complete: 2,976 records in 2 files/);
        sameAsReference(t, dir);
      });
    }

    await t.test('complete: true on a half-done export: not believed, the export continues', async (t) => {
      const dir = await partialExport(t);
      const checkpoint = readCheckpoint(dir);
      checkpoint.complete = true;
      writeCheckpoint(dir, checkpoint);
      const run = await exportInto(dir);
      t.equal(run.code, 0);
      t.match(run.stderr, /the checkpoint said complete, but not every unit is: continuing/);
      t.notMatch(run.stderr, /already complete/);
      sameAsReference(t, dir);
    });

    await t.test('a file of a complete export changed: that unit exported again, the other kept', async (t) => {
      const dir = join(root, 'complete-changed');
      await cp(reference, dir, { recursive: true });
      changeOneDigit(join(dir, fileOf(second)));
      const run = await exportInto(dir);
      t.equal(run.code, 0, run.stderr);
      t.match(run.stderr, new RegExp(`cooling unit ${second}: its content does not match the SHA-256 counted; exporting it again`));
      t.notMatch(run.stderr, new RegExp(`cooling unit ${first}:`), 'the untouched unit is kept');
      t.equal(run.requests, 3, "only the changed unit's 3 pages are fetched again");
      sameAsReference(t, dir);
    });
  },
);
