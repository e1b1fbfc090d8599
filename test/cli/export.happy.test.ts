// `npm run export` end to end: a year of hourly history of company A's three units, exported
// through the client from the real service (real HTTP, real PostgreSQL), equals the database's
// hourly rows exactly (count and checksum), in CSV and in NDJSON; the units were found by the
// export itself; a second run of the same command has nothing left to do, and prints only that.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ColdtrackClient } from '@coldtrack/client';
import { CHECKPOINT_FILE, CURSOR_FILE, exportSensorHistory } from '@coldtrack/client/export';
import { createExportWorld, databaseHourly, fileRecords, HOURLY_RECORDS_PER_UNIT, YEAR } from '../client/world.js';
import { runExport } from '../client/run-export.js';

const world = await createExportWorld(t);
const expected = new Map(await Promise.all(world.unitIds.map(async (id) => [id, await databaseHourly(world.db, id)] as const)));
const outDir = await mkdtemp(join(tmpdir(), 'coldtrack-export-'));
t.teardown(() => rm(outDir, { recursive: true, force: true }));

t.test('the database holds a year of hourly rows per unit', async (t) => {
  for (const [id, rows] of expected) t.equal(rows.count, HOURLY_RECORDS_PER_UNIT, `unit ${id}: ${rows.count} hourly rows`);
});

for (const format of ['csv', 'ndjson'] as const) {
  t.test(`${format}: the command exports every unit, equal to the database`, async (t) => {
    const dir = join(outDir, format);
    const run = await runExport(world, ['--from', YEAR.from, '--to', YEAR.to, '--aggregation', 'hourly', '--format', format, '--out', dir]);
    t.equal(run.code, 0, `exit 0 (${run.stderr.trim().split('\n').at(-1) ?? ''})`);
    t.match(
      run.stderr,
      new RegExp(`4 units found \\(from utilization\\): ${[...world.unitIds, world.a.deletedUnitId].join(', ')}`),
      'units found from a one-day utilization page: the live ones and the deleted one',
    );
    t.match(
      run.stderr,
      new RegExp(`cooling unit ${world.a.deletedUnitId} skipped: its sensor history is not readable \\(404 not_found`),
      'the deleted one skipped',
    );
    t.match(run.stderr, /export complete: 52,560 records in 3 files/);
    t.notMatch(run.stderr, /\r|\x1b\[/, 'plain lines on a stderr that is not a terminal');
    t.same(
      readdirSync(dir).sort(),
      [...world.unitIds.map((id) => `cooling-unit-${id}.${format}`), CHECKPOINT_FILE, CURSOR_FILE].sort(),
      'one file per unit, the checkpoint and the change-feed cursor taken before the export',
    );
    for (const id of world.unitIds) {
      const file = fileRecords(join(dir, `cooling-unit-${id}.${format}`), format);
      t.same(
        { count: file.count, checksum: file.checksum },
        expected.get(id),
        `unit ${id}: ${file.count} records, the database's rows exactly`,
      );
      if (format === 'csv') t.equal(file.header, 'timestamp,cooling_unit_id,specification_type,value,sample_count,min,max', 'CSV header');
    }
    const checkpoint = JSON.parse(readFileSync(join(dir, CHECKPOINT_FILE), 'utf8'));
    t.equal(checkpoint.complete, true, 'the checkpoint says complete');

    const again = await runExport(world, [
      '--from',
      YEAR.from,
      '--to',
      YEAR.to,
      '--aggregation',
      'hourly',
      '--format',
      format,
      '--out',
      dir,
    ]);
    t.equal(again.code, 0);
    t.match(
      again.stderr,
      /export already complete .* 52,560 records in 3 files; nothing to do/,
      'a re-run of a complete export does nothing',
    );
    t.equal(again.requests, 0, 'and makes no request');
    t.match(
      again.stderr,
      /^export already complete [^\n]*\n$/,
      'and says only that, in one line: no progress line of zeros before it ("exported 0 of ? records, ...")',
    );
  });
}

t.test('raw readings over two windows (a range longer than 366 days is split), for listed units', async (t) => {
  const dir = join(outDir, 'raw');
  const requests: string[] = [];
  const unit = world.unitIds[1]!;
  const summary = await exportSensorHistory(
    new ColdtrackClient({
      baseUrl: world.baseUrl,
      token: world.token,
      onEvent: (event) => event.type === 'request' && requests.push(event.path),
    }),
    { baseUrl: world.baseUrl, from: '2024-12-01', to: '2026-01-31', aggregation: 'raw', units: [unit], format: 'ndjson', outDir: dir },
  );
  t.equal(summary.unitsFrom, 'listed');
  const {
    rows: [db],
  } = await world.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM sensor_readings WHERE cooling_unit_id = $1', [unit]);
  t.equal(summary.records, db!.n, `${db!.n} readings, every one in the database`);
  const lines = readFileSync(join(dir, `cooling-unit-${unit}.ndjson`), 'utf8')
    .trimEnd()
    .split('\n');
  t.equal(lines.length, db!.n);
  const keys = lines.map((line) => JSON.parse(line) as { timestamp: string; specification_type: string });
  t.ok(
    keys.every(
      (key, i) =>
        i === 0 ||
        key.timestamp > keys[i - 1]!.timestamp ||
        (key.timestamp === keys[i - 1]!.timestamp && key.specification_type > keys[i - 1]!.specification_type),
    ),
    'ordered by timestamp then specification_type, no record twice',
  );
  // windows: 2024-12-01..2025-12-01 (366 days) and 2025-12-02..2026-01-31
  const { rows: windows } = await world.db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM sensor_readings WHERE cooling_unit_id = $1 GROUP BY recorded_at < '2025-12-02' ORDER BY 1`,
    [unit],
  );
  const pages = windows.reduce((sum, window) => sum + Math.ceil(window.n / 1000), 0);
  t.equal(requests.length, pages, `${pages} requests: the pages of 1,000 of each of the two windows`);
  t.ok(existsSync(join(dir, CHECKPOINT_FILE)));
});
