// Fast-tier files run several to a process (test/setup/groups.ts, file-group.mjs): a group
// gives each file its own tap root, runs its teardowns before the next file starts, reports each
// file's outcome, and the groups are balanced by the files' last times.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { fileSection, GROUP_SIZE, groupOutcomes, writeGroups } from '../setup/groups.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

t.test('a group runs its files in order, each with its own root, teardowns and outcome', async (t) => {
  // under the repository's root, where the module hooks transpile TypeScript, but not in test/
  const dir = `.tap/group-check-${process.pid}`;
  mkdirSync(join(root, dir), { recursive: true });
  t.teardown(() => rmSync(join(root, dir), { recursive: true, force: true }));
  const order = 'globalThis.groupOrder ??= []';
  writeFileSync(
    join(root, dir, 'first.test.ts'),
    `import t from 'tap';\n${order};\nt.teardown(() => { globalThis.groupOrder.push('first torn down') });\n` +
      `t.test('first runs', async (t) => { globalThis.groupOrder.push('first: ' + t.parent?.name); t.pass() });\n`,
  );
  writeFileSync(
    join(root, dir, 'second.test.ts'),
    `import t from 'tap';\n${order};\nt.test('second runs after the first was torn down', async (t) => {\n` +
      `  t.same(globalThis.groupOrder, ['first: ${dir}/first.test.ts', 'first torn down']);\n});\n`,
  );
  writeFileSync(
    join(root, dir, 'third.test.ts'),
    `import t from 'tap';\nt.test('third fails', async (t) => { t.equal(1, 2, 'one is two') });\n`,
  );
  writeFileSync(
    join(root, dir, 'group.test.mjs'),
    `import { runGroup } from '../../test/setup/file-group.mjs';\n` +
      `await runGroup(${JSON.stringify(['first', 'second', 'third'].map((name) => `${dir}/${name}.test.ts`))});\n`,
  );
  const run = spawnSync(process.execPath, ['--import', './test/setup/prebuilt.mjs', `${dir}/group.test.mjs`], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, TAP_TIMEOUT: '30', NODE_OPTIONS: '' },
  });
  t.not(run.status, 0, 'a failed file fails its group');
  t.match(run.stdout, new RegExp(`^ok 1 - ${dir}/first.test.ts`, 'm'));
  t.match(run.stdout, new RegExp(`^ok 2 - ${dir}/second.test.ts`, 'm'), 'the second file saw the first one done and torn down');
  t.match(run.stdout, new RegExp(`^not ok 3 - ${dir}/third.test.ts`, 'm'));
  const section = fileSection(run.stdout.split('\n'), `${dir}/third.test.ts`);
  t.match(section.join('\n'), /not ok 1 - one is two/, "a file's section of the group's TAP holds its failures");
  t.notMatch(section.join('\n'), /first runs/, 'and nothing of the other files');
});

t.test('groups are balanced by the files last times, and keep them for the next run', async (t) => {
  const scratch = mkdtempSync(join(tmpdir(), 'coldtrack-groups-'));
  t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
  mkdirSync(join(scratch, '.tap'));
  const files = Array.from({ length: 2 * GROUP_SIZE + 1 }, (_, index) => `test/f${String(index).padStart(2, '0')}.test.ts`);
  // one slow file, slower than the quick ones together
  const times = Object.fromEntries(files.map((file, index) => [file, index === 7 ? files.length : 1]));
  writeFileSync(join(scratch, '.tap/file-times.json'), JSON.stringify(times));
  const groups = writeGroups(scratch, files);
  t.equal(groups.size, 3, `at most ${GROUP_SIZE} files a group`);
  t.same([...groups.values()].flat().sort(), files, 'every file in one group exactly');
  const slowGroup = [...groups.values()].find((group) => group.includes('test/f07.test.ts'))!;
  t.same(slowGroup, ['test/f07.test.ts'], 'the slow file has a group to itself, the quick ones share the others');

  // a run's results: the group's test points are its files, with their times
  const [path, members] = [...groups].find(([, group]) => group.length > 1)!;
  mkdirSync(join(scratch, '.tap/test-results/.tap/groups'), { recursive: true });
  writeFileSync(
    join(scratch, '.tap/test-results', `${path}.tap`),
    members.map((file, index) => `${index === 0 ? 'not ok' : 'ok'} ${index + 1} - ${file} # time=2500.5ms`).join('\n'),
  );
  const outcomes = groupOutcomes(scratch, new Map([[path, members]]));
  t.equal(outcomes.get(members[0]!), 'fail');
  t.equal(outcomes.get(members[1]!), 'pass');
  const next = writeGroups(scratch, files);
  t.ok(
    [...next.values()].every((group) => !group.includes('test/f07.test.ts') || group.length === 1),
    'the slow file still alone after its time is kept',
  );
});
