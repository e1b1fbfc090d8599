// `npm run build` of @coldtrack/client: tsc into dist.next/, which then replaces dist/ by two
// renames. Not `rm -rf dist && tsc`: dist/ would be missing for the seconds tsc takes, and whatever
// loads the package meanwhile fails (the bench kit builds it while the test suite's other files
// import it); a fresh folder still leaves no file of a deleted source behind.
import { execFileSync } from 'node:child_process';
import { renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const inClient = (name) => fileURLToPath(new URL(`../${name}`, import.meta.url));
const [next, current, old] = [inClient('dist.next'), inClient('dist'), inClient('dist.old')];

rmSync(next, { recursive: true, force: true });
rmSync(old, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', inClient('tsconfig.json'), '--outDir', next], { stdio: 'inherit' });
try {
  renameSync(current, old);
} catch (error) {
  if (error.code !== 'ENOENT') throw error;
}
renameSync(next, current);
rmSync(old, { recursive: true, force: true });
