// The service's TypeScript transpiled once, ahead of the processes the tests start (servers,
// clusters and their workers, the CLI commands): a process started on JavaScript skips tsx's
// module hooks, which cost ~0.8 s of CPU per process (1.8 vs 1.0 s to load the app; a 2-worker
// cluster 6 vs 3.5 s), and the suite starts over a hundred of them on a CPU-bound machine. The
// test files and their helpers are transpiled too, for the same reason: tap's test processes load
// them from here (test/setup/prebuilt-hooks.mjs), under their .ts URLs.
// The type check (npm run typecheck) still runs over the same sources; this only strips types,
// as tsx does when it loads a file. Output: .build/ mirroring the repository's layout, with the
// files the code reads beside its modules (sql/, console/, the rate-limit script) linked in.
// The partner client (@coldtrack/client, the npm workspace client/) is built here too, as its own
// package is (tsc to client/dist/): the tests, the bench and the console import it by its name,
// which resolves to that build, as a partner's code would.
//   node test/setup/compile.mjs        (npm test and tap's `before` script run it)
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const root = fileURLToPath(new URL('../..', import.meta.url));
const out = join(root, '.build');
// what a started process loads: the service, its rollup thread and the partner client (export)
const SOURCE_DIRS = ['src', 'workers', 'client'];
// the test files themselves, loaded from here under their own URLs (test/setup/prebuilt-hooks.mjs)
const TEST_DIRS = ['test'];
// read at run time next to the modules (paths relative to import.meta.url)
const LINKED = ['sql', 'console'];

function walk(dir, files = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      // the console's and the client's builds are not sources
      if (entry.name !== 'node_modules' && entry.name !== 'build' && entry.name !== 'dist') walk(path, files);
    } else files.push(path);
  }
  return files;
}

rmSync(out, { recursive: true, force: true });
const files = SOURCE_DIRS.flatMap((dir) => walk(join(root, dir)));
const isTypeScript = (file) => file.endsWith('.ts') && !file.endsWith('.d.ts');
const typescript = [...files, ...TEST_DIRS.flatMap((dir) => walk(join(root, dir)))].filter(isTypeScript);
buildSync({
  entryPoints: typescript,
  outdir: out,
  outbase: root,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  sourcemap: 'linked',
  logLevel: 'warning',
});
// other files beside the sources (the rate-limit Lua script) travel with them
for (const file of files.filter((file) => !file.endsWith('.ts') && !file.endsWith('.tsx'))) {
  const target = join(out, relative(root, file));
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(file, target);
}
for (const name of LINKED) symlinkSync(join('..', name), join(out, name));

// the client package's build (its `npm run build`, without npm's ~0.3 s start)
execFileSync(process.execPath, [join(root, 'client', 'scripts', 'build.mjs')], { stdio: 'inherit' });
