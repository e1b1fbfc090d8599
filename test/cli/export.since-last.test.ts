// `coldtrack-export --since-last` end to end (real HTTP, real PostgreSQL): a year of hourly history
// exported, then late readings ingested into three old hours of two units, a reading re-sent as it
// was, and a reading for a unit the token may not read (another company's): the delta holds
// exactly the late readings and the hourly and daily buckets they altered, with the API's values,
// nothing of the other unit; a second --since-last writes nothing.
import { existsSync, readdirSync, readFileSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import t from 'tap';
import { CHECKPOINT_FILE, CURSOR_FILE } from '@coldtrack/client/export';
import { lineRuns, parseReadings, ReadingValidator } from '../../src/sensors/formats.js';
import { ingestReadings } from '../../src/sensors/ingest.js';
import { createExportWorld, YEAR } from '../client/world.js';
import { runExport } from '../client/run-export.js';

const world = await createExportWorld(t);
const outDir = await mkdtemp(join(tmpdir(), 'coldtrack-since-last-'));
t.teardown(() => rm(outDir, { recursive: true, force: true }));
const [u1, u2, u3] = world.unitIds as [number, number, number];
const otherUnit = world.b.unitIds[0]!;

/** Lines of a CSV file as objects by its header. */
function csvRows(path: string): Record<string, string>[] {
  const [header, ...lines] = readFileSync(path, 'utf8').trimEnd().split('\n');
  return lines.map((line) => Object.fromEntries(line.split(',').map((cell, i) => [header!.split(',')[i]!, cell])));
}

async function apiRecord(unit: number, type: string, aggregation: string, timestamp: string) {
  const day = timestamp.slice(0, 10);
  const response = await world.ctx.app.inject({
    method: 'GET',
    url: `/api/v1/sensor-data?cooling_unit_id=${unit}&specification_type=${type}&aggregation=${aggregation}&start_date=${day}&end_date=${day}&page_size=1000`,
    headers: { authorization: `Bearer ${world.token}` },
  });
  const records = response.json<{ data: { timestamp: string; value: number; min?: number; max?: number; sample_count: number }[] }>().data;
  return records.find((record) => record.timestamp === timestamp);
}

t.test('the export stores the feed cursor it took before reading the history', async (t) => {
  const run = await runExport(world, ['--from', YEAR.from, '--to', YEAR.to, '--aggregation', 'hourly', '--out', outDir]);
  t.equal(run.code, 0, run.stderr.trim().split('\n').at(-1) ?? '');
  t.ok(existsSync(join(outDir, CHECKPOINT_FILE)) && existsSync(join(outDir, CURSOR_FILE)), 'checkpoint and cursor beside it');
  const first = await runExport(world, ['--since-last', '--out', outDir]);
  t.equal(first.code, 0);
  t.match(first.stderr, /no changes since the last run: nothing written/, 'nothing landed since the export began');
});

t.test('late readings, a duplicate and another company: the delta holds exactly what changed', async (t) => {
  const duplicate = (
    await world.db.pool.query<{ at: string; value: number }>(
      `SELECT sensor_timestamp_text(recorded_at) AS at, value FROM sensor_readings
       WHERE cooling_unit_id = $1 AND specification_type = 'HUMIDITY' AND recorded_at >= '2025-06-01' ORDER BY recorded_at LIMIT 1`,
      [u3],
    )
  ).rows[0]!;
  const late = [
    [u1, 'TEMPERATURE', '2025-03-10T10:07:00Z', 3.25],
    [u1, 'HUMIDITY', '2025-07-04T18:37:30.500000Z', 71.5],
    [u2, 'TEMPERATURE', '2025-11-20T03:52:00Z', -1.75],
  ] as const;
  const csv = [
    'cooling_unit_id,specification_type,recorded_at,value',
    ...late.map((reading) => reading.join(',')),
    `${u3},HUMIDITY,${duplicate.at},${duplicate.value}`,
    `${otherUnit},TEMPERATURE,2025-05-05T05:05:00Z,9`,
  ].join('\n');
  const stats = await ingestReadings(
    world.db.pool,
    parseReadings(lineRuns(Readable.from([`${csv}\n`])), 'csv', new ReadingValidator(() => new Date('2026-01-02T00:00:00Z'))),
  );
  t.same([stats.inserted, stats.duplicates], [4, 1], 'four new readings (one of another company), the re-sent one dropped');

  const before = readdirSync(outDir).sort();
  const run = await runExport(world, ['--since-last', '--out', outDir]);
  t.equal(run.code, 0, run.stderr.trim().split('\n').at(-1) ?? '');
  t.match(run.stderr, /delta 1 written .*: 3 readings, 3 hourly and 3 daily buckets from 3 changed spans/);
  const files = ['delta-000001-raw.csv', 'delta-000001-hourly.csv', 'delta-000001-daily.csv'];
  t.same(readdirSync(outDir).sort(), [...before, ...files].sort(), 'three delta files, nothing else changed in the folder');

  const raw = csvRows(join(outDir, files[0]!));
  t.same(
    raw.map((row) => [Number(row.cooling_unit_id), row.specification_type, row.timestamp, Number(row.value)]),
    late.map((reading) => [...reading]),
    'exactly the late readings, keyed (unit, type, timestamp), with their values',
  );
  t.notOk(readFileSync(join(outDir, files[0]!), 'utf8').includes(duplicate.at), 'nothing for the re-sent reading (it changed nothing)');
  for (const [file, resolution, width] of [
    [files[1]!, 'hourly', 13],
    [files[2]!, 'daily', 10],
  ] as const) {
    const rows = csvRows(join(outDir, file));
    t.same(
      rows.map((row) => [Number(row.cooling_unit_id), row.specification_type, row.resolution, row.timestamp!.slice(0, width)]),
      late.map(([unit, type, at]) => [unit, type, resolution, at.slice(0, width)]),
      `${resolution}: the three buckets the late readings altered`,
    );
    // a reading every 15 minutes, and the late one
    t.same(
      rows.map((row) => Number(row.sample_count)),
      [0, 0, 0].map(() => (resolution === 'hourly' ? 5 : 97)),
      `${resolution}: each counts the late reading`,
    );
    for (const row of rows) {
      const api = await apiRecord(Number(row.cooling_unit_id), row.specification_type!, resolution, row.timestamp!);
      t.same(
        [Number(row.value), Number(row.min), Number(row.max), Number(row.sample_count)],
        [api?.value, api?.min, api?.max, api?.sample_count],
        `${resolution} ${row.cooling_unit_id} ${row.timestamp}: the API's new values`,
      );
    }
  }
  for (const file of files)
    t.notOk(readFileSync(join(outDir, file), 'utf8').includes(`\n${otherUnit},`), `${file}: nothing of another company`);

  const again = await runExport(world, ['--since-last', '--out', outDir]);
  t.equal(again.code, 0);
  t.match(again.stderr, /no changes since the last run: nothing written/);
  t.same(readdirSync(outDir).sort(), [...before, ...files].sort(), 'a second --since-last writes nothing');
});

t.test('refusals: no export, no cursor, other options', async (t) => {
  const empty = await mkdtemp(join(tmpdir(), 'coldtrack-since-last-empty-'));
  t.teardown(() => rm(empty, { recursive: true, force: true }));
  const none = await runExport(world, ['--since-last', '--out', empty]);
  t.same([none.code, none.requests], [2, 0], 'a folder without an export: exit 2, no request');
  t.match(none.stderr, /no export in .*: export the history first/);
  const mixed = await runExport(world, ['--since-last', '--out', outDir, '--from', '2025-01-01']);
  t.equal(mixed.code, 2, 'the export options come from the checkpoint: naming one is refused');
});

t.test("the folder after deltas: the export's own, and nothing planted in it is used", async (t) => {
  const rerun = await runExport(world, ['--from', YEAR.from, '--to', YEAR.to, '--aggregation', 'hourly', '--out', outDir]);
  t.equal(rerun.code, 0, `the export accepts its folder with the delta files: ${rerun.stderr.trim().split('\n').at(-1)}`);

  const planted = join(outDir, 'delta-000009-raw.csv');
  writeFileSync(planted, 'not written by the export\n');
  const foreign = await runExport(world, ['--since-last', '--out', outDir]);
  t.same([foreign.code, foreign.requests], [2, 0], 'a delta file numbered past the cursor: exit 2, no request');
  t.match(foreign.stderr, /delta-000009-raw\.csv, a file the export did not write/);
  unlinkSync(planted);

  const victim = join(outDir, '..', `coldtrack-since-last-victim-${process.pid}.json`);
  writeFileSync(victim, 'the target of a planted link\n');
  t.teardown(() => rm(victim, { force: true }));
  const kept = `${victim}.cursor`;
  renameSync(join(outDir, CURSOR_FILE), kept);
  symlinkSync(victim, join(outDir, CURSOR_FILE));
  const linked = await runExport(world, ['--since-last', '--out', outDir]);
  t.same([linked.code, linked.requests], [2, 0], 'a cursor file that is a link: exit 2, no request');
  t.equal(readFileSync(victim, 'utf8'), 'the target of a planted link\n', "the link's target is untouched");
  unlinkSync(join(outDir, CURSOR_FILE));
  renameSync(kept, join(outDir, CURSOR_FILE));
  const restored = await runExport(world, ['--since-last', '--out', outDir]);
  t.equal(restored.code, 0, 'the real cursor back: it runs again');
});
