// Several test files in one test process (a group, written by test/run.mjs through groups.ts):
// tap runs each file it is given in a process of its own, and a fast-tier file's process spent
// most of its CPU loading tap, the module hooks and the app before its first test. A group imports
// each of its files inside a subtest named by the file, one after another; the file's own
// `import t from 'tap'` resolves to that subtest (file-tap.mjs, through prebuilt-hooks.mjs), so its
// tests, hooks and teardowns belong to it as they would to the root of a process of its own: its
// teardowns (app, pools, database) run when its last test ends, before the next file starts.
import { appendFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t from 'tap';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fileTests = new Map();
globalThis[Symbol.for('coldtrack.fileTests')] = fileTests;

/** Runs `files` (paths from the repository's root) one after another, each in a subtest of its own. */
export async function runGroup(files) {
  // tap's timeout (.taprc) is one file's: each file keeps it, and the group's is their sum
  const fileTimeout = Number(process.env.TAP_TIMEOUT || 30) * 1000;
  t.setTimeout(files.length * fileTimeout);
  for (const file of files) {
    const url = pathToFileURL(`${root}${file}`).href;
    const cpuBefore = process.cpuUsage();
    await t.test(file, { timeout: fileTimeout }, async (fileTest) => {
      fileTests.set(url, fileTest);
      await import(url);
    });
    // each file's own CPU, for test/tools/cpu-by-process.mjs
    if (process.env.COLDTRACK_FILE_CPU_LOG) {
      const { user, system } = process.cpuUsage(cpuBefore);
      appendFileSync(process.env.COLDTRACK_FILE_CPU_LOG, `${(user + system) / 1e6}\t${file}\n`);
    }
  }
}
