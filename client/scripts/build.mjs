// `npm run build` of @coldtrack/client (and its `prepack`, so `npm pack` and `npm publish` ship a
// build even from a clone that never ran one): src/version.ts from package.json's version, then tsc
// into dist.next/, which then replaces dist/ by two renames. Not `rm -rf dist && tsc`: dist/ would be
// missing for the seconds tsc takes, and whatever loads the package meanwhile fails (the bench kit
// builds it while the test suite's other files import it); a fresh folder still leaves no file of a
// deleted source behind.
import { execFileSync } from 'node:child_process';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const inClient = (name) => fileURLToPath(new URL(`../${name}`, import.meta.url));
const [next, current, old] = [inClient('dist.next'), inClient('dist'), inClient('dist.old')];

writeVersionModule();
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

/**
 * The version as a constant of the sources rather than package.json read as the client loads: the
 * client imports no Node module (fs or createRequire would make it one), importing the JSON needs
 * import attributes (`with { type: 'json' }`), a syntax error on the Node 18 and 20 releases before
 * 18.20 and 20.10 that `engines` admits, and a number typed into the code would drift from
 * package.json's. Written only when it differs, and by a rename: the test suite's other files may
 * be reading the sources.
 */
function writeVersionModule() {
  const { version } = JSON.parse(readFileSync(inClient('package.json'), 'utf8'));
  // a semver has no quote or backslash, so it can stand between single quotes as it is
  if (typeof version !== 'string' || !/^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?$/.test(version))
    throw new Error(`client/package.json: version ${JSON.stringify(version)} is not a semver`);
  const text = [
    "// Written by client/scripts/build.mjs from package.json's version before every build and pack:",
    '// never edit it, raise the version in package.json. Committed, so that the type check and tsx run',
    '// the sources of a fresh clone before any build.',
    `export const CLIENT_VERSION = '${version}';`,
    '/** What a ColdtrackClient sends as User-Agent unless its `userAgent` option says otherwise. */',
    'export const DEFAULT_USER_AGENT = `@coldtrack/client/${CLIENT_VERSION}`;',
    '',
  ].join('\n');
  const target = inClient('src/version.ts');
  let existing = null;
  try {
    existing = readFileSync(target, 'utf8');
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
  if (existing === text) return;
  writeFileSync(`${target}.tmp`, text);
  renameSync(`${target}.tmp`, target);
}
