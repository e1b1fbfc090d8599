// test/run.mjs's side of file groups (file-group.mjs is the test process's): the fast-tier files
// of a run go to tap as a few group files, each running several test files in one process, so
// that tap, the module hooks and the app load once a group instead of once a file. Files of the
// heavy tiers keep a process each: they start servers and clusters, and some time their restarts.
// Loaded on Node's own type stripping, as test/tiers.ts is: erasable syntax and node: imports only.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const GROUPS_DIR = '.tap/groups';
// how long each grouped file took, by the runs before (seconds): the groups are balanced by it
const TIMES_FILE = '.tap/file-times.json';

/** About this many files a group: the fixed cost is paid once a group, and tap's jobs still have several to share. */
export const GROUP_SIZE = 24;

/** Whether a path tap runs is a group file. */
export const isGroup = (path: string): boolean => path.startsWith(`${GROUPS_DIR}/`);

const readTimes = (root: string): Record<string, number> => {
  try {
    return JSON.parse(readFileSync(join(root, TIMES_FILE), 'utf8'));
  } catch {
    return {};
  }
};

/**
 * Group files for `files` (paths from the root), written into .tap/groups/: a map from each
 * group's path to its files. Longest first, each file goes to the group with the least time so
 * far (by the last runs' times; a file never timed counts as the median), so the groups end
 * together and no single group holds the run's tail.
 */
export function writeGroups(root: string, files: readonly string[]): Map<string, string[]> {
  const dir = join(root, GROUPS_DIR);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const times = readTimes(root);
  const known = files
    .map((file) => times[file])
    .filter((time) => typeof time === 'number')
    .sort((a, b) => a - b);
  const median = known[Math.floor(known.length / 2)] ?? 1;
  const timeOf = (file: string) => times[file] ?? median;
  const groups = Array.from({ length: Math.ceil(files.length / GROUP_SIZE) }, () => ({ files: [] as string[], time: 0 }));
  for (const file of [...files].sort((a, b) => timeOf(b) - timeOf(a) || a.localeCompare(b))) {
    const shortest = groups.reduce((least, group) => (group.time < least.time ? group : least), groups[0]!);
    shortest.files.push(file);
    shortest.time += timeOf(file);
  }
  const written = groups.map((group, index) => {
    const path = `${GROUPS_DIR}/fast-${String(index + 1).padStart(2, '0')}.test.mjs`;
    const list = JSON.stringify(group.files.sort(), null, 2);
    writeFileSync(
      join(root, path),
      `// written by test/run.mjs (test/setup/groups.ts)\nimport { runGroup } from '../../test/setup/file-group.mjs';\n\nawait runGroup(${list});\n`,
    );
    return [path, group.files] as const;
  });
  return new Map(written);
}

/**
 * What the groups' TAP (tap's .tap/test-results) says of their files: each file's outcome, and
 * its time kept for the next run's balance. A group's own test points are its files'.
 */
export function groupOutcomes(root: string, groupFiles: ReadonlyMap<string, readonly string[]>): Map<string, 'pass' | 'fail'> {
  const outcome = new Map<string, 'pass' | 'fail'>();
  const times = readTimes(root);
  for (const [group, files] of groupFiles) {
    const results = join(root, '.tap/test-results', `${group}.tap`);
    const lines = existsSync(results) ? readFileSync(results, 'utf8').split('\n') : [];
    for (const line of lines) {
      const point = line.match(/^(not )?ok \d+ - (\S+)(?: # time=([\d.]+)ms)?/);
      const [, failed, file, milliseconds] = point ?? [];
      if (!file || !files.includes(file)) continue;
      outcome.set(file, failed ? 'fail' : 'pass');
      if (milliseconds) times[file] = Math.round(Number(milliseconds)) / 1000;
    }
  }
  writeFileSync(join(root, TIMES_FILE), `${JSON.stringify(times, null, 1)}\n`);
  return outcome;
}

/** `text` matched literally in a RegExp (RegExp.escape, not yet in TypeScript's ES2023 lib). */
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * The part of a group's TAP (its lines) that is one test file's subtest: from its "# Subtest"
 * line to the test point that closes it, which names the file.
 */
export function fileSection(lines: readonly string[], file: string): string[] {
  const start = lines.findIndex((line) => line.trim() === `# Subtest: ${file}`);
  if (start < 0) return [];
  const end = lines.findIndex((line, index) => index > start && new RegExp(`^\\s*(not )?ok \\d+ - ${escape(file)}( |$)`).test(line));
  return lines.slice(start, end < 0 ? undefined : end + 1);
}
