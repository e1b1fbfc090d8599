// Where the suite's CPU goes: runs `npm test` (arguments pass through) with every Node process it
// starts recording its own CPU time (user + system, from /proc/self/stat) as it exits, then
// prints the totals by kind of process and the test files that used the most.
//   node test/tools/cpu-by-process.mjs [tap arguments]
// Processes killed with SIGKILL record nothing (the operations tests' clusters end that way);
// PostgreSQL, Redis and Chromium are not Node processes: compare the total with `time npm test`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'coldtrack-cpu-'));
const log = join(dir, 'processes.tsv');
const recorder = join(dir, 'record.mjs');
writeFileSync(log, '');
writeFileSync(
  recorder,
  `
import { appendFileSync, readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
if (isMainThread) process.on('exit', () => {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    const seconds = (Number(fields[11]) + Number(fields[12])) / 100;
    appendFileSync(${JSON.stringify(log)}, seconds + '\\t' + process.argv.slice(1).join(' ').replace(process.cwd() + '/', '') + '\\n');
  } catch {}
});
`,
);

// the files of a group (test/setup/file-group.mjs) share a process: each one's own CPU goes here
const fileLog = join(dir, 'files.tsv');
writeFileSync(fileLog, '');
const run = spawnSync('npm', ['test', '--', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: {
    ...process.env,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${recorder}`.trim(),
    COLDTRACK_FILE_CPU_LOG: fileLog,
  },
});

// by the script a process runs (its first argument): tap and npm name test files as arguments too
const scriptOf = (command) => command.split(' ')[0];
const isTestFile = (command) => /\.test\.(ts|mjs)$/.test(scriptOf(command));
// a group's process (GROUPS_DIR of test/setup/groups.ts, which this script, run on any Node, cannot import)
const isGroup = (command) => command.startsWith('.tap/groups/');
const kindOf = (command) => {
  const script = scriptOf(command);
  if (isTestFile(command)) return isGroup(command) ? 'test files, grouped (test/setup/groups.ts)' : 'test files';
  if (/src\/main\.(ts|js)$/.test(script)) return 'servers (cluster primaries and workers, single processes)';
  if (/src\/cli\//.test(script)) return 'commands (export, ingest, migrate, seed, ...)';
  if (/\btsc$/.test(script) && !command.includes('.tshy')) return 'type check';
  return 'npm, tap and set-up';
};
/** A log's lines: seconds of CPU, then the command (or the grouped file). */
const readLog = (path) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [seconds, command] = line.split('\t');
      return { seconds: Number(seconds), command };
    });
const rows = readLog(log);
const byKind = new Map();
for (const row of rows) {
  const kind = kindOf(row.command);
  const entry = byKind.get(kind) ?? { seconds: 0, count: 0 };
  byKind.set(kind, { seconds: entry.seconds + row.seconds, count: entry.count + 1 });
}
const total = rows.reduce((sum, row) => sum + row.seconds, 0);
console.log(`\nCPU recorded by Node processes that exited normally: ${total.toFixed(0)} s`);
for (const [kind, { seconds, count }] of [...byKind].sort((a, b) => b[1].seconds - a[1].seconds)) {
  console.log(`${seconds.toFixed(0).padStart(6)} s  ${String(count).padStart(4)} processes  ${kind}`);
}
console.log('\nTest files using the most CPU (their own, in their process or their group; what they start is counted above):');
for (const row of [...rows.filter((row) => isTestFile(row.command) && !isGroup(row.command)), ...readLog(fileLog)]
  .sort((a, b) => b.seconds - a.seconds)
  .slice(0, 15)) {
  console.log(`${row.seconds.toFixed(1).padStart(6)} s  ${scriptOf(row.command)}`);
}
process.exit(run.status ?? 1);
