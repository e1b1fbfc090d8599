// `coldtrack-export` by bulk pull (the default for all units), as a partner runs it (a child
// process, real HTTP): the files equal the database and those of the paged export byte for byte,
// in a handful of requests instead of one a page; killed each time between a slice reaching its
// files and the checkpoint counting it, the same command ends with the same files; a list of units
// is exported page by page; a slice whose connection drops mid-body is asked for again, and an
// export stopped by drops resumes from its last whole slice.
import { readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { CHECKPOINT_FILE } from '@coldtrack/client/export';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { countingRelay, runExport } from '../client/run-export.js';
import { createExportWorld, databaseHourly, fileRecords, YEAR, unitFilesIn } from '../client/world.js';

const world = await createExportWorld(t);
const root = await mkdtemp(join(tmpdir(), 'coldtrack-export-bulk-'));
t.teardown(() => rm(root, { recursive: true, force: true }));
const args = (dir: string, extra: string[] = []) => [
  '--from',
  YEAR.from,
  '--to',
  YEAR.to,
  '--aggregation',
  'hourly',
  '--out',
  dir,
  ...extra,
];
const unitFiles = unitFilesIn;
const checkpointOf = (dir: string) =>
  JSON.parse(readFileSync(join(dir, CHECKPOINT_FILE), 'utf8')) as {
    complete: boolean;
    bulk?: { window: number; start_date: string | null };
    units: Record<string, { file: string; bytes: number; records: number; skipped?: string }>;
  };

const paged = join(root, 'paged');

/** The folder holds the paged export's unit files, byte for byte. */
function sameAsPaged(t: Test, dir: string, what = 'the same files') {
  t.same(unitFiles(dir), unitFiles(paged), what);
  for (const name of unitFiles(paged))
    t.ok(readFileSync(join(dir, name)).equals(readFileSync(join(paged, name))), `${name}: byte for byte`);
}
const bulk = join(root, 'bulk');

t.test('by bulk pull: the database, and the paged export byte for byte, in a handful of requests', async (t) => {
  const pages = await runExport(world, args(paged, ['--method', 'pages']));
  t.equal(pages.code, 0, pages.stderr.trim().split('\n').at(-1) ?? '');
  const run = await runExport(world, args(bulk));
  t.equal(run.code, 0, run.stderr.trim().split('\n').at(-1) ?? '');
  t.match(run.stderr, /cooling unit \d+ skipped: its sensor history is not readable/, 'the deleted unit skipped, as by pages');
  t.ok(run.requests <= 6, `${run.requests} requests by bulk pull, ${pages.requests} by pages`);
  sameAsPaged(t, bulk, 'the same files');
  for (const id of world.unitIds) {
    const file = fileRecords(join(bulk, `cooling-unit-${id}.csv`), 'csv');
    t.same({ count: file.count, checksum: file.checksum }, await databaseHourly(world.db, id), `unit ${id}: the database`);
  }
  const checkpoint = checkpointOf(bulk);
  t.same([checkpoint.complete, checkpoint.bulk?.window], [true, 1], 'the checkpoint: complete, by bulk, past its one window');
  const again = await runExport(world, args(bulk));
  t.same([again.code, again.requests], [0, 0], 'a re-run of a complete export asks nothing');
});

t.test('a token without the utilization scope: the units are those the pull names, found as it goes', async (t) => {
  const dir = join(root, 'sensor-only');
  const { token } = await world.issue({ scopes: ['sensor_data'] });
  const run = await runExport(world, args(dir), { token });
  t.equal(run.code, 0, run.stderr.trim().split('\n').at(-1) ?? '');
  t.match(run.stderr, /units: those the bulk pull names, found as it goes/);
  t.ok(run.requests <= 4, `${run.requests} requests: the change cursor and the slices, no daily pages to find the units`);
  t.equal((checkpointOf(dir) as { units_from?: string }).units_from, 'bulk');
  sameAsPaged(t, dir, 'the same files (the deleted unit has none)');
});

t.test('killed each time between a slice reaching its files and the checkpoint counting it: the same files', async (t) => {
  const dir = join(root, 'crashing');
  const extra = ['--slice-records', '8000'];
  const runs: string[] = [];
  let truncations = 0;
  for (let attempt = 1; attempt <= 30; attempt++) {
    const run = await runExport(world, args(dir, extra), { env: { COLDTRACK_EXPORT_TEST_KILL_AFTER_PAGES: '3' } });
    if (run.code === 0) {
      runs.push('complete');
      break;
    }
    t.equal(run.signal, 'SIGKILL', `run ${attempt} died by SIGKILL`);
    const checkpoint = checkpointOf(dir);
    runs.push(`killed at ${checkpoint.bulk?.start_date ?? 'the start'}`);
    const longer = Object.values(checkpoint.units).filter(
      (unit) => (statSync(join(dir, unit.file), { throwIfNoEntry: false })?.size ?? 0) > unit.bytes,
    );
    if (longer.length > 0) truncations++;
  }
  t.equal(runs.at(-1), 'complete', `completed after ${runs.length} runs: ${runs.join('; ')}`);
  t.ok(runs.length >= 4, 'several runs were killed on the way');
  t.ok(truncations >= 3, `${truncations} times files held a slice the checkpoint did not count (cut off on resume)`);
  sameAsPaged(t, dir, 'the same files');
});

t.test('a list of units is exported page by page', async (t) => {
  const dir = join(root, 'listed');
  const run = await runExport(world, args(dir, ['--units', String(world.unitIds[0]), '--page-size', '1000']));
  t.equal(run.code, 0);
  t.equal(checkpointOf(dir).bulk, undefined, 'no bulk progress in its checkpoint');
  t.ok(run.requests >= 18, `${run.requests} requests: the unit's 17,520 records a page of 1,000 at a time`);
  const name = `cooling-unit-${world.unitIds[0]}.csv`;
  t.ok(readFileSync(join(dir, name)).equals(readFileSync(join(paged, name))), `${name}: byte for byte`);
});

t.test('a service without bulk pulls: the export goes page by page, the same files', async (t) => {
  // the service as it was before bulk pulls: /bulk is an unknown path (404), the rest as it is
  const relay = await countingRelay(world.baseUrl);
  t.teardown(() => relay.close());
  const older = http.createServer((request, response) => {
    if (request.url?.startsWith('/api/v1/sensor-data/bulk')) {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { code: 'not_found', message: 'Route GET:/api/v1/sensor-data/bulk not found' } }));
      return;
    }
    const forwarded = http.request(`${relay.url}${request.url}`, { method: request.method, headers: request.headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => older.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => older.close(() => resolve())));
  const dir = join(root, 'older-service');
  const run = await runExport(
    { relay: { ...relay, url: `http://127.0.0.1:${(older.address() as AddressInfo).port}` }, token: world.token },
    args(dir),
  );
  t.equal(run.code, 0, run.stderr.trim().split('\n').at(-1) ?? '');
  t.match(run.stderr, /the service has no bulk pulls: exporting page by page/);
  t.equal(checkpointOf(dir).bulk, undefined, 'the checkpoint no longer says bulk');
  t.ok(relay.requests >= 50, `${relay.requests} requests reached the service: page by page`);
  sameAsPaged(t, dir);
});

/**
 * A relay in front of the service that cuts the body of bulk answers `cuts(n)` says to (n counts
 * the bulk requests from 1) after its first `bytes` bytes, as a dropped connection would.
 */
async function cuttingRelay(t: Test, policy: { cuts: (n: number) => boolean }, bytes = 16_384) {
  const relay = await countingRelay(world.baseUrl);
  t.teardown(() => relay.close());
  let bulkRequests = 0;
  const cut: number[] = [];
  const server = http.createServer((request, response) => {
    const bulkRequest = request.url?.startsWith('/api/v1/sensor-data/bulk') ? ++bulkRequests : 0;
    const forwarded = http.request(`${relay.url}${request.url}`, { method: request.method, headers: request.headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      if (!bulkRequest || !policy.cuts(bulkRequest) || answer.statusCode !== 200) return void answer.pipe(response);
      let passed = 0;
      answer.on('data', (chunk: Buffer) => {
        if (passed >= bytes) return;
        response.write(chunk.subarray(0, bytes - passed));
        passed += chunk.length;
        if (passed >= bytes) {
          cut.push(bulkRequest);
          answer.destroy();
          response.socket?.destroy();
        }
      });
    });
    response.on('close', () => response.writableFinished || forwarded.destroy());
    forwarded.on('error', () => response.destroy());
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // the counting relay's figures read live (a spread would copy them once)
  const front = {
    url,
    close: relay.close,
    get requests() {
      return relay.requests;
    },
    get statuses() {
      return relay.statuses;
    },
  };
  return { world: { relay: front, token: world.token }, cut };
}

t.test('a slice whose connection drops mid-body is asked for again: the same files', async (t) => {
  // the 2nd and 3rd bulk requests are cut: the 2nd slice twice, read whole at its third attempt
  const cutting = await cuttingRelay(t, { cuts: (n) => n === 2 || n === 3 });
  const dir = join(root, 'dropped');
  const run = await runExport(cutting.world, args(dir, ['--slice-records', '8000']));
  t.equal(run.code, 0, run.stderr.trim().split('\n').at(-1) ?? '');
  t.same(cutting.cut, [2, 3], 'two answers were cut mid-body');
  t.equal((run.stderr.match(/broke off .*asking for it again/g) ?? []).length, 2, 'each drop said, and the slice asked for again');
  sameAsPaged(t, dir, 'the same files as the paged export');
});

t.test('an export stopped by drops resumes from its last whole slice, not from the start', async (t) => {
  const dir = join(root, 'stopped-by-drops');
  const extra = ['--slice-records', '8000'];
  // every attempt at the 3rd slice is cut: the export gives up after its attempts
  const policy = { cuts: (n: number) => n >= 3 };
  const failing = await cuttingRelay(t, policy);
  const stopped = await runExport(failing.world, args(dir, extra));
  t.not(stopped.code, 0, 'the export stopped with a failure');
  t.ok(failing.cut.length >= 2, `${failing.cut.length} answers cut`);
  const checkpoint = checkpointOf(dir);
  t.equal(checkpoint.complete, false);
  t.ok(checkpoint.bulk?.start_date, `the checkpoint names the slice to read next (${checkpoint.bulk?.start_date})`);
  t.ok(
    Object.values(checkpoint.units).some((unit) => unit.records > 0),
    'the two whole slices are counted in the checkpoint',
  );

  // the connection healthy again, the same command at the same address
  policy.cuts = () => false;
  const healthy = failing;
  const resumed = await runExport(healthy.world, args(dir, extra));
  t.equal(resumed.code, 0, resumed.stderr.trim().split('\n').at(-1) ?? '');
  const fresh = await runExport(healthy.world, args(join(root, 'from-nothing'), extra));
  t.equal(fresh.code, 0);
  t.ok(
    resumed.requests < fresh.requests,
    `the resumed run asked ${resumed.requests} requests, a run from nothing ${fresh.requests}: the first slices were not read again`,
  );
  sameAsPaged(t, dir, 'the same files as the paged export');
});
