// `npm test`'s runner: tap with a concise reporter (failures in full, nothing for passing ones), no
// coverage (tap's cannot map TypeScript loaded through module hooks: it measured the template
// script's migrations and called them "All files"), then closing lines a CI can read: files and
// assertions, and for a failed run each failing file's first failures again, since a CI log often
// shows only its tail.
// Output that is not a terminal (a CI log, `npm test > log`) gets plain lines instead: the terse
// reporter redraws its progress lines with cursor codes (~990 lines of them for the suite in a
// file), so there tap writes raw TAP, read here with tap's own parser: one line per finished file,
// no escape codes, then the same closing lines.
// The static checks (npm run typecheck, then npm run lint: ESLint and Prettier's check) run beside
// the tests and fail the run like a test would.
// Some files only (`npm test -- PATH...`, or a tier of test/tiers.ts: `--tier=fast`, what `npm run
// test:fast` runs): no static checks unless `--checks` asks, and only the database templates those
// files clone, kept when built from what is checked out now (test/setup/template-db.ts).
// The fast-tier files run several to a process (test/setup/groups.ts, file-group.mjs), reported
// file by file all the same; `--isolate` gives each file a process of its own.
// It runs on the Node the project pins (the `node` devDependency: node_modules/.bin/node), whichever
// node started it: `npm test` puts that one first on PATH already; started on another (the
// machine's own, `node test/run.mjs`), it starts itself again on the pinned one, with
// node_modules/.bin first on PATH as npm would, so the npm and npx it starts and every process a
// test starts (through process.execPath) run on that Node too. The closing lines name it.
import { spawn } from 'node:child_process';
import { existsSync, globSync, readFileSync, rmSync, statSync } from 'node:fs';
import { delimiter, join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const pinnedNode = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).devDependencies.node;
if (process.versions.node !== pinnedNode) {
  const projectNode = fileURLToPath(new URL('../node_modules/.bin/node', import.meta.url));
  if (!existsSync(projectNode)) {
    console.error(`The suite runs on Node ${pinnedNode} (the node devDependency), which is not installed: run npm ci`);
    process.exit(1);
  }
  const binDirectory = fileURLToPath(new URL('../node_modules/.bin', import.meta.url));
  const rerun = spawn(projectNode, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, PATH: [binDirectory, process.env.PATH].filter(Boolean).join(delimiter) },
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => rerun.kill(signal));
  rerun.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  // the rerun's exit ends this process
  await new Promise(() => {});
}

// coverage files and results an earlier run left would be reported as this run's
rmSync(new URL('../.tap/coverage', import.meta.url), { recursive: true, force: true });
rmSync(new URL('../.tap/test-results', import.meta.url), { recursive: true, force: true });

const started = Date.now();
const root = fileURLToPath(new URL('..', import.meta.url));
// V8's code cache on disk (Node's compile cache), for every Node process of the run and the next:
// over a hundred test processes load the same app, tap and dependencies, each compiling them
// again otherwise; 20-21 against 23-26 s of CPU for 8 test files of the fast tier. Node keys an
// entry by the file and a hash of its source (a changed file is compiled afresh); set in the
// environment, not with module.enableCompileCache() in the test processes' preload, which comes
// after tap's own preloads and saved nothing measurable. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
process.env.NODE_COMPILE_CACHE ??= join(root, 'node_modules', '.cache', 'node-compile-cache');
// this runner's own options; the rest goes to tap
const { values: own, tokens } = parseArgs({
  options: {
    tier: { type: 'string', multiple: true, default: [] },
    checks: { type: 'boolean', default: false },
    isolate: { type: 'boolean', default: false },
  },
  strict: false,
  tokens: true,
  allowPositionals: true,
});
const ownOption = new Set(
  tokens.filter((token) => token.kind === 'option' && ['tier', 'checks', 'isolate'].includes(token.name)).map((token) => token.index),
);
// the value of a `--tier NAME` written apart is the runner's too
for (const token of tokens) if (token.kind === 'option' && token.name === 'tier' && !token.inlineValue) ownOption.add(token.index + 1);
const tapArgs = process.argv.slice(2).filter((_, index) => !ownOption.has(index));
// tap's configuration (TapConfig.load, below) reads process.argv, where it would refuse these
process.argv.splice(2, Infinity, ...tapArgs);
const { OWN_PROCESS, TIERS, templatesOf, tierOf } = await import('./tiers.ts');
const { fileSection, groupOutcomes, isGroup, writeGroups } = await import('./setup/groups.ts');
const allTestFiles = () => globSync('test/**/*.test.ts', { cwd: root }).sort();
const tierFiles = own.tier.flatMap((name) => {
  if (TIERS.some((tier) => tier.name === name)) return allTestFiles().filter((file) => tierOf(file) === name);
  console.error(`No test tier ${name}: ${TIERS.map((tier) => tier.name).join(', ')} (test/tiers.ts)`);
  process.exit(1);
});
// the paths given, as tap takes them (files, folders), and the test files they name
const paths = tapArgs.filter((arg) => !arg.startsWith('-') && (existsSync(arg) || /[*?]|\.test\.ts$/.test(arg)));
const subset = paths.length > 0 || own.tier.length > 0;
const filesOf = (path) => {
  const stat = existsSync(path) ? statSync(path) : null;
  if (stat?.isDirectory()) return globSync(`${path.replace(/\/+$/, '')}/**/*.test.ts`);
  return stat ? [path] : globSync(path);
};
const selected = [...new Set([...tierFiles, ...paths.flatMap(filesOf).map((file) => relative(root, file))])];
// a path that names no file tap can be sure of (a pattern of its own): every template
const templates = subset && paths.every((path) => filesOf(path).length > 0) ? templatesOf(root, selected) : ['postgres', 'timescale'];
const runChecks = !subset || own.checks;
// The static checks run beside the tests rather than before them, one after the other: each uses
// one core, and the suite's first ~20 s (templates, the first files starting) leave the other one
// idle. A failure still fails the run, and stops it as soon as it is reported. (Run at the lowest
// CPU priority instead, the type check made no difference: 219-235 s against 219-224 s.)
const typecheck = runChecks
  ? spawn('sh', ['-c', 'npm run --silent typecheck && npm run --silent lint'], { stdio: ['ignore', 'pipe', 'pipe'] })
  : null;
let typecheckOutput = '';
typecheck?.stdout.on('data', (chunk) => (typecheckOutput += chunk));
typecheck?.stderr.on('data', (chunk) => (typecheckOutput += chunk));
const typechecked = typecheck
  ? new Promise((resolve) => typecheck.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))))
  : Promise.resolve(null);
let child = null;
void typechecked.then((code) => {
  if (code === 0 || code === null) return;
  console.error(`\nThe type check or the lint (npm run typecheck, npm run lint) failed:\n${typecheckOutput.trim()}`);
  child?.kill('SIGTERM');
  process.exit(code);
});

/** A command's exit code; its output goes where `stdio` says. */
const run = (command, args, stdio) =>
  new Promise((resolve) => {
    const spawned = spawn(command, args, { stdio });
    spawned.on('error', () => resolve(1));
    spawned.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });

// tap's test class is generated with the plugins .taprc names (`tap build`, ~4 s of CPU and wall);
// a fresh install has the default set, whose TypeScript loader the test processes must not get:
// built only when the set differs, as tap's runner would do itself, but before the runner has
// loaded the set it passes on to the test processes. Beside it, the migrated templates every test
// file clones, built outside tap (see templates-ready.mjs), with the test processes' module hooks
// (tsx's cost ~0.8 s more CPU).
const builtPlugins = readFileSync(new URL('../node_modules/@tapjs/test/test-built/dist/esm/index.js', import.meta.url), 'utf8').match(
  /^export const signature = `([^`]*)`/m,
)?.[1];
const { TapConfig } = await import('@tapjs/config');
const pluginsBuilt =
  builtPlugins === (await TapConfig.load()).pluginSignature
    ? Promise.resolve(0)
    : run('npx', ['tap', 'build'], ['ignore', 'ignore', 'inherit']);
const templatesBuilt = run(
  process.execPath,
  [
    '--import',
    './test/setup/prebuilt.mjs',
    'test/setup/template-db.ts',
    ...(subset ? [`--only=${templates.join(',')}`, '--reuse-fresh'] : []),
  ],
  'inherit',
);
for (const status of await Promise.all([pluginsBuilt, templatesBuilt])) {
  if (status !== 0) {
    typecheck?.kill();
    process.exit(status);
  }
}
// Clones of the local template made ahead of the files that use them, and their databases dropped
// after them, by a process beside tap (test/helpers/database-stock.ts): a clone and a drop wait
// on the server's checkpoints for seconds, which the files no longer wait for themselves.
const stockRun = templates.includes('postgres') ? `${process.pid}` : null;
const stock = stockRun
  ? spawn(process.execPath, ['--import', './test/setup/prebuilt.mjs', 'test/setup/database-stock.ts'], {
      stdio: ['pipe', 'inherit', 'inherit'],
      env: { ...process.env, COLDTRACK_TEST_DATABASE_STOCK: stockRun },
    })
  : null;
const stockDone = stock ? new Promise((resolve) => stock.on('exit', resolve)) : Promise.resolve();
// The test files tap runs: a folder given is its test files (tap itself ran none of a folder's
// files: `npm test -- test/bench`), a pattern stays tap's; with none given, every file. The
// fast-tier ones run several to a process (test/setup/groups.ts) unless --isolate asks for a
// process each, as a single file always gets.
const testFiles = subset
  ? [
      ...new Set([
        ...paths.flatMap((path) =>
          existsSync(path)
            ? filesOf(path)
                .sort()
                .map((file) => relative(root, file))
            : [path],
        ),
        ...tierFiles,
      ]),
    ]
  : allTestFiles();
const groupable = own.isolate
  ? []
  : testFiles.filter((file) => file.endsWith('.test.ts') && tierOf(file) === 'fast' && !OWN_PROCESS.includes(file));
const groupFiles = groupable.length > 1 ? writeGroups(root, groupable) : new Map();
const inGroup = new Set([...groupFiles.values()].flat());
const args = [...tapArgs.filter((arg) => !paths.includes(arg)), ...testFiles.filter((file) => !inGroup.has(file)), ...groupFiles.keys()];
// plain lines where stdout is not a terminal, unless a --reporter given here says otherwise
const plainOutput = !process.stdout.isTTY && !args.some((arg) => /^(--reporter\b|-R)/.test(arg));
const plainText = (text) => text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');

// tap's runner with test/setup/quiet-processinfo.mjs preloaded (the file says why)
const quiet = `--import=${new URL('./setup/quiet-processinfo.mjs', import.meta.url).href}`;
child = spawn('npx', ['tap', `--reporter=${plainOutput ? 'tap' : 'terse'}`, '--before=test/setup/templates-ready.mjs', ...args], {
  stdio: ['inherit', 'pipe', 'pipe'],
  env: {
    ...process.env,
    NODE_OPTIONS: [process.env.NODE_OPTIONS, quiet].filter(Boolean).join(' '),
    ...(stockRun ? { COLDTRACK_TEST_DATABASE_STOCK: stockRun } : {}),
  },
});
let tail = '';
let errorTail = '';
// decoded as a stream, so that no character is split between two chunks
if (plainOutput) child.stderr.setEncoding('utf8');
child.stderr.on('data', (chunk) => {
  process.stderr.write(plainOutput ? plainText(chunk) : chunk);
  errorTail = (errorTail + chunk.toString()).slice(-3000);
});
// the counts of a plain run, as the terse reporter counts them: files, and assertions at any depth
const plain = { files: { pass: 0, fail: 0 }, asserts: { pass: 0, fail: 0 }, failed: [], sawTap: false };
let stdoutEnded = Promise.resolve();
if (plainOutput) {
  const { Parser } = await import('tap-parser');
  const parser = new Parser();
  const kind = (result) => (result.todo ? 'todo' : result.skip ? 'skip' : result.ok ? 'pass' : 'fail');
  let file = null;
  let fileAsserts = 0;
  let fileFailed = 0;
  // a test file's output that is not TAP (console.log), named by its file as the terse report does
  const showExtra = (line, name = file?.name) => {
    if (!line.trim()) return;
    console.log(name ? `1> ${name}: ${plainText(line).trim()}` : plainText(line).trimEnd());
  };
  const nestedExtra = (subtest, name) => {
    subtest.on('extra', (line) => showExtra(line, name));
    subtest.on('child', (nested) => nestedExtra(nested, name));
  };
  parser.on('version', () => (plain.sawTap = true));
  // each subtest of the runner's TAP is a test file or a group of them (their output does not
  // interleave), its test point the outcome; a group's own test points are its files'
  const fileDone = (result) => {
    const type = kind(result);
    const seconds = result.time == null ? '' : `, ${(result.time / 1000).toFixed(1)} s`;
    const asserts = `${fileAsserts} assert${fileAsserts === 1 ? '' : 's'}${fileFailed ? `, ${fileFailed} failed` : ''}`;
    if (type === 'pass' || type === 'fail') plain.files[type]++;
    if (type === 'fail') plain.failed.push(result.name);
    if (type === 'skip' || type === 'todo') console.log(`${type} ${result.name} (${result.skip || result.todo})`);
    else console.log(`${result.ok ? 'ok' : 'not ok'} ${result.name} (${asserts}${seconds})`);
    fileAsserts = 0;
    fileFailed = 0;
  };
  parser.on('child', (subtest) => {
    file = subtest;
    fileAsserts = 0;
    fileFailed = 0;
    if (!isGroup(subtest.name)) return nestedExtra(subtest, subtest.name);
    subtest.on('child', (fileTest) => nestedExtra(fileTest, fileTest.name));
    subtest.on('extra', (line) => showExtra(line, subtest.name));
    subtest.on('assert', fileDone);
  });
  // every assertion at any depth, less the points that merely close a subtest
  parser.on('result', (result) => {
    const type = kind(result);
    if (type === 'pass' || type === 'fail') plain.asserts[type]++;
    fileAsserts++;
    if (type === 'fail') fileFailed++;
  });
  parser.on('assert', (result) => {
    plain.sawTap = true;
    file = null;
    if (!isGroup(result.name)) return fileDone(result);
    // a group that failed beyond its files' own failures (its process died): said, and failed
    if (!result.ok && !plain.failed.some((name) => groupFiles.get(result.name)?.includes(name))) {
      console.log(`not ok ${result.name} (a group of ${groupFiles.get(result.name)?.length} files, in one process)`);
      plain.files.fail++;
      plain.failed.push(result.name);
    }
  });
  parser.on('comment', (comment) => {
    // the runner's own notes; its totals and time are in the closing lines
    if (!/^# (Subtest\b|time=|\{)/.test(comment)) console.log(plainText(comment).trimEnd());
  });
  parser.on('bailout', (reason) => console.log(`Bail out!${reason ? ` ${reason}` : ''}`));
  parser.on('extra', (line) => showExtra(line));
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => parser.write(chunk));
  // the exit handler waits for the last of tap's output (test processes may hold stderr longer)
  stdoutEnded = new Promise((resolve) =>
    child.stdout.on('end', () => {
      parser.end();
      resolve();
    }),
  );
} else {
  child.stdout.on('data', (chunk) => {
    process.stdout.write(chunk);
    tail = (tail + chunk.toString()).slice(-4000);
  });
}

/** The first failed assertions of a file's TAP (from .tap/test-results), with their diagnostics. */
function firstFailures(file, maxLines = 40) {
  // a grouped file's results are its section of its group's
  const group = [...groupFiles].find(([, files]) => files.includes(file))?.[0];
  const results = new URL(`../.tap/test-results/${group ?? file}.tap`, import.meta.url);
  if (!existsSync(results)) return ['  (no TAP results recorded: the file failed before its first test, see stderr below)'];
  const all = readFileSync(results, 'utf8').split('\n');
  const lines = group ? fileSection(all, file) : all;
  const picked = [];
  for (let i = 0; i < lines.length && picked.length < maxLines; i++) {
    if (!/^\s*not ok /.test(lines[i])) continue;
    picked.push(lines[i]);
    // its YAML diagnostics follow, indented deeper and closed by "..."
    for (i += 1; i < lines.length && picked.length < maxLines && !/^\s*\.\.\.\s*$/.test(lines[i]); i++) picked.push(lines[i]);
  }
  return picked.length ? picked : ['  (no failed assertion recorded: the file exited with an error, see stderr below)'];
}

child.on('exit', async (code, signal) => {
  // a type error exits from the handler above; passing, it is reported with the rest
  const typecheckCode = await typechecked;
  await stdoutEnded;
  // the stock's last clones and the files' databases dropped before the run ends
  stock?.stdin.end();
  await stockDone;
  const terse = plainText(tail);
  // the terse reporter redraws its summary as files finish: the last one is the final count
  const lastCount = (pattern) => {
    const match = [...terse.matchAll(pattern)].at(-1);
    return match && { pass: match[1], fail: match[2] };
  };
  const asserts = plainOutput ? plain.sawTap && plain.asserts : lastCount(/Asserts:\s+(\d+) pass\s+(\d+) fail/g);
  // the grouped files' outcomes (and times, for the next run's groups)
  const grouped = groupOutcomes(root, groupFiles);
  // the terse reporter counts processes: a group counts as its files
  const suites = plainOutput ? plain.sawTap && plain.files : lastCount(/Suites:\s+(\d+) pass\s+(\d+) fail/g);
  if (suites && !plainOutput) {
    const failedGroups = [...terse.matchAll(/FAIL\s+(\S+)/g)].filter((match) => isGroup(match[1])).length;
    const outcomes = [...grouped.values()];
    suites.pass = Number(suites.pass) - (groupFiles.size - failedGroups) + outcomes.filter((outcome) => outcome === 'pass').length;
    suites.fail = Number(suites.fail) - failedGroups + outcomes.filter((outcome) => outcome === 'fail').length;
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  if (code !== 0) {
    // a group that failed is its failed files, or itself when none failed (its process died)
    const failedFilesOf = (name) => {
      if (!isGroup(name)) return [name];
      const files = groupFiles.get(name)?.filter((file) => grouped.get(file) === 'fail') ?? [];
      return files.length ? files : [name];
    };
    const failed = plainOutput
      ? [...new Set(plain.failed)]
      : [...new Set([...terse.matchAll(/FAIL\s+(\S+\.test\.\w+)/g)].flatMap((match) => failedFilesOf(match[1])))];
    if (failed.length) console.log(`\nFailed files (${failed.length}), first failures of each:`);
    for (const file of failed) console.log([`- ${file}`, ...firstFailures(file)].join('\n'));
    if (errorTail.trim()) console.log(`\nThe end of stderr:\n${plainText(errorTail)}`);
  }
  console.log(`Node: ${process.version} (${process.execPath})`);
  if (suites) console.log(`Test files: ${suites.pass} passed, ${suites.fail} failed (${seconds} s)`);
  if (asserts) console.log(`Assertions: ${asserts.pass} passed, ${asserts.fail} failed`);
  if (typecheckCode === 0) console.log('Type check and lint: passed');
  if (typecheckCode === null) console.log('Type check and lint: not run (some files only; --checks runs them)');
  process.exit(code ?? (signal ? 1 : 0));
});
