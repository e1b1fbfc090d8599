// Holds a fast-tier test file to its tier (test/tiers.ts): in its process, starting a process
// throws, naming the command, unless the command is one of FAST_TIER_COMMANDS. So a file that
// starts a server, a cluster or a browser cannot land in the fast tier unnoticed: it fails in
// `npm run test:fast` and in `npm test` alike, until it is listed in the tier it needs.
// Loaded with test/setup/prebuilt.mjs, in every test process; inert in any other process. The
// files of a group (test/setup/groups.ts) share their process, and its guard.
import childProcess, { ChildProcess } from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import { basename, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FAST_TIER, FAST_TIER_COMMANDS, tierOf } from '../tiers.ts';
import { isGroup } from './groups.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const file = process.argv[1] && relative(root, process.argv[1]).split(sep).join('/');

// a group of files (groups.ts) holds fast-tier files only
if (file && ((/^test\/.+\.test\.ts$/.test(file) && tierOf(file) === FAST_TIER.name) || isGroup(file))) {
  const refuse = (command, args = []) => {
    // a shell's command line is judged by its first word
    const shell = args[0] === '-c' && /(^|\/)(ba|da)?sh$/.test(command);
    const program = basename(shell ? (String(args[1]).trim().split(/\s+/)[0] ?? '') : String(command));
    if (FAST_TIER_COMMANDS.includes(program)) return;
    throw new Error(
      `${file} is in the fast tier, whose files start no process, but it started ${program}: ` +
        'name it in the heavy tier it needs (test/tiers.ts)',
    );
  };
  // every asynchronous start (spawn, exec, execFile, fork, cluster's workers) ends here
  const spawn = ChildProcess.prototype.spawn;
  ChildProcess.prototype.spawn = function guardedSpawn(options) {
    refuse(options.file, options.args?.slice(1));
    return spawn.call(this, options);
  };
  // the synchronous ones, wrapped where the test files import them from
  const { spawnSync, execFileSync, execSync } = childProcess;
  childProcess.spawnSync = (command, ...rest) => (refuse(command, Array.isArray(rest[0]) ? rest[0] : []), spawnSync(command, ...rest));
  childProcess.execFileSync = (command, ...rest) => (
    refuse(command, Array.isArray(rest[0]) ? rest[0] : []),
    execFileSync(command, ...rest)
  );
  childProcess.execSync = (command, ...rest) => (refuse('sh', ['-c', command]), execSync(command, ...rest));
  syncBuiltinESMExports();
}
