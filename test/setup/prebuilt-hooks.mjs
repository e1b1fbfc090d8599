// Module hooks for the test processes (registered by prebuilt.mjs), in place of tsx's: a TypeScript
// module of this repository loads from its transpiled copy in .build/ (test/setup/compile.mjs, run
// before every test run), keeping its own URL, so import.meta.url, stack traces and tap's file
// names stay those of the .ts file; one without a fresh copy (edited since) is transpiled here by
// the same esbuild. Why: tsx's hooks cost ~0.5 s more CPU per test process just to load the app
// (1.6 s against 1.1 s here, 0.75 s for plain JavaScript without hooks), and the suite runs over
// a hundred test processes on a CPU-bound machine. Type checking stays with tsc (npm run typecheck).
// Synchronous, in the thread that loads the modules (module.registerHooks, registered by
// prebuilt.mjs): module.register()'s asynchronous hooks run in a thread of their own, and every
// import of every module (fastify's, pg's, ours) was a message to it and a blocking wait for the
// answer: 2.3 against 2.9 s of CPU for a test process that builds the app (test/routes/me.happy).
// Worker threads (the rollup pool's) inherit prebuilt.mjs through execArgv and register these again.
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = pathToFileURL(fileURLToPath(new URL('../..', import.meta.url))).href;
const built = new URL('.build/', root).href;

/** Ours: a .ts file of the repository, outside node_modules and .build. */
const isOwnTypeScript = (url) => url.startsWith(root) && url.endsWith('.ts') && !url.includes('/node_modules/') && !url.startsWith(built);

const mtime = (url) => statSync(new URL(url), { throwIfNoEntry: false })?.mtimeMs ?? null;

const fileTap = new URL('file-tap.mjs', import.meta.url).href;

export function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL;
  // a test file run in a group (file-group.mjs) gets its group's subtest for tap's root
  if (specifier === 'tap' && parent?.endsWith('.test.ts') && globalThis[Symbol.for('coldtrack.fileTests')]) {
    return { url: `${fileTap}?file=${encodeURIComponent(parent)}`, format: 'module', shortCircuit: true };
  }
  // TypeScript's convention: './x.js' names x.ts
  if (parent?.startsWith(root) && !parent.includes('/node_modules/') && specifier.startsWith('.') && specifier.endsWith('.js')) {
    const typescript = new URL(`${specifier.slice(0, -3)}.ts`, parent).href;
    if (mtime(typescript) !== null) return { url: typescript, format: 'module', shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

/** esbuild's synchronous API (it runs the service in a worker thread of its own); loaded when first needed. */
let esbuild = null;

export function load(url, context, nextLoad) {
  if (!isOwnTypeScript(url)) return nextLoad(url, context);
  const copy = `${built}${url.slice(root.length, -3)}.js`;
  const [sourceTime, copyTime] = [mtime(url), mtime(copy)];
  if (sourceTime !== null && copyTime !== null && copyTime >= sourceTime) {
    const source = readFileSync(new URL(copy), 'utf8');
    // the source map sits beside the copy, not beside the URL the module keeps
    return {
      format: 'module',
      source: source.replace(/\/\/# sourceMappingURL=(\S+)\s*$/, (_, map) => `//# sourceMappingURL=${new URL(map, copy).href}\n`),
      shortCircuit: true,
    };
  }
  // edited since the copy was written (or never copied): transpiled here, as compile.mjs would
  esbuild ??= createRequire(import.meta.url)('esbuild');
  const { code } = esbuild.transformSync(readFileSync(new URL(url), 'utf8'), {
    loader: 'ts',
    format: 'esm',
    target: 'node24',
    sourcemap: 'inline',
    sourcefile: fileURLToPath(url),
  });
  return { format: 'module', source: code, shortCircuit: true };
}
