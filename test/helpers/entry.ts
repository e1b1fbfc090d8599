// How a test starts one of the service's programs (the server, a CLI command) as a process of its
// own: from the transpiled copy in .build/ (test/setup/compile.mjs; npm test and tap's `before`
// script write it), which skips tsx's ~0.8 s of CPU per process, or through tsx as `npm start`
// does when that copy is missing or older than a source file (a test file run by hand after an
// edit), so a test never runs stale code.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const BUILD = join(repoRoot, '.build');
const SOURCE_DIRS = ['src', 'workers', 'client/src'];

function newestChange(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestChange(path) : statSync(path).mtimeMs);
  }
  return newest;
}

let buildIsCurrent: boolean | undefined;
function compiledCopyIsCurrent(): boolean {
  if (buildIsCurrent === undefined) {
    const stamp = join(BUILD, 'src', 'main.js');
    buildIsCurrent = existsSync(stamp) && SOURCE_DIRS.every((dir) => newestChange(join(repoRoot, dir)) <= statSync(stamp).mtimeMs);
  }
  return buildIsCurrent;
}

/** Node's arguments to run `script` (a path like 'src/main.ts', relative to the repository). */
export function nodeArgs(script: string): string[] {
  if (compiledCopyIsCurrent()) return ['--enable-source-maps', join(BUILD, script.replace(/\.ts$/, '.js'))];
  return ['--import', 'tsx', join(repoRoot, script)];
}
