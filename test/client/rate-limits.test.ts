// The token's 100 requests a window, for real (real limits, shared in Redis; a 20 s window
// here): a token whose budget is nearly spent exports a year of hourly history for three units in
// parallel; the client waits for the window to end instead of being refused, so no 429 ever
// reaches it (nor the caller), and the files are the database's rows exactly. The same through
// `npm run export` (another token, at the same time), which says it is waiting for the rate limit.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ColdtrackClient, type ClientEvent } from '@coldtrack/client';
import { exportSensorHistory } from '@coldtrack/client/export';
import { runExport } from './run-export.js';
import { createExportWorld, databaseHourly, fileRecords, YEAR } from './world.js';

// the limits' window shortened from the spec's minute: what is tested is that the client waits
// one out, whatever its length, and a minute of it made this the suite's longest file (76 s)
const WINDOW_MS = 20_000;
const world = await createExportWorld(t, {
  env: { REDIS_URL: 'redis://127.0.0.1:6379' },
  realRateLimits: true,
  rateLimitWindowMs: WINDOW_MS,
});
const outDir = await mkdtemp(join(tmpdir(), 'coldtrack-budget-'));
t.teardown(() => rm(outDir, { recursive: true, force: true }));

/** Spends `count` of the token's 100 requests of this minute, as someone else would. */
async function spend(token: string, count: number) {
  for (let i = 0; i < count; i++) {
    const response = await world.ctx.app.inject({
      method: 'GET',
      url: '/api/v1/analytics/utilization?page_size=1',
      headers: { authorization: `Bearer ${token}` },
    });
    if (response.statusCode !== 200) throw new Error(`spending the budget: ${response.statusCode}`);
  }
}

// the two run at once (each token has its own budget): one window's wait for both
async function command(t: Test) {
  const { token } = await world.issue();
  // one request left: the export by bulk pull (a handful of requests) needs the next window too
  await spend(token, 99);
  const dir = join(outDir, 'command');
  const run = await runExport(world, ['--from', YEAR.from, '--to', YEAR.to, '--out', dir], { token });
  t.equal(run.code, 0, `command: ${run.stderr.trim().split('\n').at(-1)}`);
  t.match(
    run.stderr,
    /^waiting \d+s for the token's rate limit \(until \d\d:\d\d:\d\d UTC\)$/m,
    'command: the wait is shown as a rate-limit wait',
  );
  t.equal(run.statuses.filter((status) => status === 429).length, 0, `command: no 429 among ${run.statuses.length} answers`);
  for (const id of world.unitIds) {
    const file = fileRecords(join(dir, `cooling-unit-${id}.csv`), 'csv');
    t.same(
      { count: file.count, checksum: file.checksum },
      await databaseHourly(world.db, id),
      `command: unit ${id}, the database's rows exactly`,
    );
  }
}

async function engine(t: Test) {
  // 85 of the token's 100 requests spent by someone else first
  await spend(world.token, 85);
  const events: ClientEvent[] = [];
  const client = new ColdtrackClient({ baseUrl: world.baseUrl, token: world.token, onEvent: (event) => events.push(event) });
  const started = Date.now();
  // 56 requests (units found, 3 x 18 pages, the deleted unit's 404), 3 units at once
  const summary = await exportSensorHistory(client, {
    baseUrl: world.baseUrl,
    ...YEAR,
    aggregation: 'hourly',
    units: 'all',
    format: 'ndjson',
    outDir: join(outDir, 'engine'),
    concurrency: 3,
    // page by page: enough requests to run past the window (a bulk pull needs a handful)
    method: 'pages',
  });
  const seconds = (Date.now() - started) / 1000;
  const statuses = events
    .filter((event): event is Extract<ClientEvent, { type: 'response' }> => event.type === 'response')
    .map((event) => event.status);
  t.equal(statuses.filter((status) => status === 429).length, 0, `engine: no 429 among ${statuses.length} answers`);
  t.equal(statuses.filter((status) => status === 200).length, 55, 'engine: 55 pages');
  const waits = events.filter((event) => event.type === 'rate-limit-wait');
  t.equal(waits.length, 1, 'engine: one wait for the window to end, announced once');
  t.ok(seconds > WINDOW_MS / 4000, `engine: it took the wait (${seconds.toFixed(1)} s, the window is ${WINDOW_MS / 1000} s)`);
  const remaining = events.flatMap((event) => (event.type === 'response' && event.rateLimit ? [event.rateLimit.remaining] : []));
  t.ok(remaining.includes(0), 'engine: the first window was used to its last request');
  t.equal(summary.records, 52_560, 'engine: every record');
  for (const id of world.unitIds) {
    const file = fileRecords(join(outDir, 'engine', `cooling-unit-${id}.ndjson`), 'ndjson');
    t.same(
      { count: file.count, checksum: file.checksum },
      await databaseHourly(world.db, id),
      `engine: unit ${id}, the database's rows exactly`,
    );
  }
}

t.test('a nearly spent budget: the export waits for the window, never gets a 429, and completes', async (t) => {
  await Promise.all([engine(t), command(t)]);
});
