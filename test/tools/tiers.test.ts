// The test tiers stay honest (test/tiers.ts): this file is in the fast tier, so its process runs
// under the guard every fast-tier file runs under, and starting a process here must throw; the
// manifest names no file twice and no file that is gone; a file that starts a browser, a private
// server or a cluster through the helpers that do so is not in the fast tier.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { globSync } from 'node:fs';
import { matchesGlob, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { FAST_TIER, HEAVY_TIERS, OWN_PROCESS, importsReached, templatesOf, tierOf } from '../tiers.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const thisFile = relative(root, fileURLToPath(import.meta.url));
const testFiles = globSync('test/**/*.test.ts', { cwd: root }).sort();

t.test('this file is in the fast tier, and there a process cannot be started', async (t) => {
  t.equal(tierOf(thisFile), FAST_TIER.name);
  const refused = /is in the fast tier, whose files start no process, but it started (node|chromium|sh|redis-server)/;
  t.throws(() => spawn(process.execPath, ['-e', '']), refused, 'spawn of a Node process');
  t.throws(() => spawn('chromium', ['--headless']), refused, 'a browser');
  t.throws(() => execFileSync('redis-server', ['--port', '0']), refused, 'execFileSync');
  t.throws(() => spawnSync('sh', ['-c', 'node -e 0']), refused, 'a shell running node');
  // the short commands the fast tier may run still run
  t.match(execFileSync('git', ['--version'], { encoding: 'utf8' }), /^git version/);
});

t.test('every pattern of a heavy tier takes at least one test file', async (t) => {
  for (const tier of HEAVY_TIERS) {
    for (const pattern of tier.patterns) {
      const matched = testFiles.filter((file) => matchesGlob(file, pattern));
      t.ok(matched.length > 0, `${tier.name}: ${pattern} matches a test file`);
      // a pattern whose files an earlier tier takes does nothing
      t.ok(
        matched.some((file) => tierOf(file) === tier.name),
        `${tier.name}: ${pattern} takes a file no earlier tier takes`,
      );
    }
  }
});

t.test('the files kept out of groups are fast-tier files that exist', async (t) => {
  for (const file of OWN_PROCESS) {
    t.ok(testFiles.includes(file), `${file} exists`);
    t.equal(tierOf(file), FAST_TIER.name, `${file} is in the fast tier (the heavy tiers' files all get a process each)`);
  }
});

t.test('a file that starts a browser, a private server or a cluster through a helper is not in the fast tier', async (t) => {
  const heavyHelpers = [
    'test/helpers/browser.ts',
    'test/helpers/server-process.ts',
    'test/helpers/pg-private.ts',
    'test/helpers/pg-replica.ts',
    'test/helpers/pgbouncer.ts',
    'test/helpers/redis-cluster.ts',
    'test/helpers/debian-clusters.ts',
    'test/ops/prometheus-server.ts',
    'test/client/packed-client.ts',
    'test/operations/harness.ts',
  ];
  const fast = testFiles.filter((file) => tierOf(file) === FAST_TIER.name);
  t.ok(fast.length > 100, `${fast.length} files in the fast tier`);
  for (const file of fast) {
    const reached = importsReached(root, [file]);
    t.same(
      heavyHelpers.filter((helper) => reached.has(helper)),
      [],
      `${file} reaches no helper that starts processes`,
    );
  }
});

t.test('the templates a file needs are found through its imports', async (t) => {
  t.same(templatesOf(root, ['test/routes/health.test.ts']), ['postgres']);
  t.same(templatesOf(root, ['test/sensors/timescale-jobs.test.ts']), ['postgres', 'timescale']);
  t.same(templatesOf(root, ['test/tokens/format.test.ts']), []);
});
