// A partner's copy made while readings land, against a 2-worker service (real HTTP, the cluster's
// workers answering requests alternately) while three ingests keep loading late readings (off the
// 15-minute grid, across the whole window, some re-sent as stored): two clients walk the history
// by cursor at once, each with its own page size, between another client's page-number reads; and
// coldtrack-export plus --since-last run through it. No walk misses or repeats a record stored
// before it began, every record stored meanwhile is in the walk or in the change feed after the
// cursor taken before it, and the export with its deltas applied ends equal to the database.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { ColdtrackClient, type SensorRecord } from '@coldtrack/client';
import { lineRuns, parseReadings, ReadingValidator } from '../../src/sensors/formats.js';
import { ingestReadings } from '../../src/sensors/ingest.js';
import { startCluster } from '../operations/harness.js';
import { countingRelay, runExport } from './run-export.js';
import { createExportWorld } from './world.js';

const WINDOW = { start_date: '2025-03-01', end_date: '2025-03-05' } as const;
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const world = await createExportWorld(t);
const cluster = await startCluster(t, { DATABASE_URL: world.db.url, REDIS_URL }, { workers: 2 });
const relay = await countingRelay(cluster.baseUrl);
t.teardown(() => relay.close());
const units = world.unitIds;

const keyOf = (r: { timestamp: string; cooling_unit_id: number | string; specification_type: string }) =>
  `${new Date(r.timestamp).toISOString()}|${r.cooling_unit_id}|${r.specification_type}`;

/** The window's readings of the company's units as the database holds them: key -> value. */
async function stored(): Promise<Map<string, number>> {
  const { rows } = await world.db.pool.query<{ recorded_at: Date; cooling_unit_id: number; specification_type: string; value: number }>(
    `SELECT recorded_at, cooling_unit_id, specification_type::text AS specification_type, value FROM sensor_readings
     WHERE cooling_unit_id = ANY($1) AND recorded_at >= $2 AND recorded_at < $3::date + 1`,
    [units, WINDOW.start_date, WINDOW.end_date],
  );
  return new Map(rows.map((row) => [keyOf({ ...row, timestamp: row.recorded_at.toISOString() }), row.value]));
}

// one sequence for the whole file: each run of ingests lands readings of its own, not the last run's again
let seed = 1;

/** Three ingests at once, each loading a few late readings at a time until stopped. */
function ingestUntil(stopped: () => boolean) {
  const random = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
  const windowMs = Date.parse(`${WINDOW.end_date}T23:59:00Z`) - Date.parse(`${WINDOW.start_date}T00:00:00Z`);
  let loads = 0;
  const one = async () => {
    while (!stopped()) {
      const lines = ['cooling_unit_id,specification_type,recorded_at,value'];
      for (let i = 0; i < 4; i++) {
        // off the 15-minute grid: a new reading, wherever the walks are
        const at = new Date(Date.parse(`${WINDOW.start_date}T00:00:00Z`) + Math.floor(random() * windowMs));
        at.setUTCSeconds(7 + Math.floor(random() * 50));
        const unit = units[Math.floor(random() * units.length)]!;
        lines.push(`${unit},${random() < 0.5 ? 'HUMIDITY' : 'TEMPERATURE'},${at.toISOString()},${(random() * 10).toFixed(2)}`);
      }
      // and one re-sent as stored (on the grid): no new record
      lines.push(`${units[0]},TEMPERATURE,${WINDOW.start_date}T06:00:00Z,0`);
      await ingestReadings(
        world.db.pool,
        parseReadings(
          lineRuns(Readable.from([`${lines.join('\n')}\n`])),
          'csv',
          new ReadingValidator(() => new Date('2026-01-02T00:00:00Z')),
        ),
      );
      loads++;
      await sleep(5);
    }
  };
  const all = Promise.all([one(), one(), one()]);
  return { done: all, loads: () => loads };
}

async function changedSpans(client: ColdtrackClient, since: string) {
  const spans = [];
  for (let cursor = since; ;) {
    const page = await client.sensorDataChanges({ since: cursor, page_size: 1000 });
    spans.push(...page.data);
    cursor = page.meta.pagination.next_cursor;
    if (!page.meta.pagination.has_next) return spans;
  }
}

t.test('two clients walk by cursor while three ingests land late readings', async (t) => {
  const clients = await Promise.all([world.issue(), world.issue(), world.issue()]).then((tokens) =>
    tokens.map(({ token }) => new ColdtrackClient({ baseUrl: cluster.baseUrl, token })),
  );
  const [walker, other, pager] = clients as [ColdtrackClient, ColdtrackClient, ColdtrackClient];
  const since = (await walker.sensorDataChanges({ since: 'now' })).meta.pagination.next_cursor;
  const before = await stored();
  let walking = 2;
  const ingests = ingestUntil(() => walking === 0);
  const walk = async (client: ColdtrackClient, pageSize: number) => {
    const records: SensorRecord[] = [];
    let page = 0;
    try {
      for await (const body of client.pages('sensorData', { ...WINDOW, page_size: pageSize })) {
        records.push(...body.data);
        // another client's pages by number in between: they must not move this walk
        await pager.sensorData({ ...WINDOW, page_size: pageSize, page: ++page + 1 });
      }
    } finally {
      walking--;
    }
    return records;
  };
  const walks = await Promise.all([walk(walker, 97), walk(other, 61)]);
  await ingests.done;
  t.ok(ingests.loads() >= 6, `ingests landed during the walks (${ingests.loads()} loads)`);
  const after = await stored();
  t.ok(after.size > before.size, `readings were stored meanwhile (${after.size - before.size})`);
  const spans = await changedSpans(walker, since);

  for (const [index, records] of walks.entries()) {
    const label = `walk ${index + 1}`;
    const keys = records.map(keyOf);
    const seen = new Set(keys);
    t.equal(seen.size, keys.length, `${label}: no record twice (${keys.length} records)`);
    t.same(
      [...before.keys()].filter((key) => !seen.has(key)),
      [],
      `${label}: every record stored before the walk began is in it`,
    );
    t.same(
      keys.filter((key) => !after.has(key)),
      [],
      `${label}: nothing that is not stored`,
    );
    const inFeed = (key: string) => {
      const [at, unit, type] = key.split('|');
      return spans.some(
        (span) =>
          span.cooling_unit_id === Number(unit) &&
          span.specification_type === type &&
          Date.parse(span.from) <= Date.parse(at!) &&
          Date.parse(at!) <= Date.parse(span.to),
      );
    };
    t.same(
      [...after.keys()].filter((key) => !seen.has(key) && !inFeed(key)),
      [],
      `${label}: every record it missed landed during it and is in the change feed after the cursor taken before`,
    );
    const ordered = keys.every((key, i) => i === 0 || Date.parse(key.split('|')[0]!) >= Date.parse(keys[i - 1]!.split('|')[0]!));
    t.ok(ordered, `${label}: in time order`);
  }
  const pids = new Set(cluster.logs().flatMap((line) => (line.msg === 'request completed' ? [line.pid] : [])));
  t.equal(pids.size, 2, 'both workers answered');
});

t.test('an export and --since-last run during ingests end equal to the database', async (t) => {
  const outDir = await mkdtemp(join(tmpdir(), 'coldtrack-sync-during-ingest-'));
  t.teardown(() => rm(outDir, { recursive: true, force: true }));
  const { token } = await world.issue();
  const exporter = { relay, token };
  let running = true;
  const ingests = ingestUntil(() => !running);
  // small pages: the export takes long enough for many loads to land while it reads
  const exportArguments = ['--from', WINDOW.start_date, '--to', WINDOW.end_date, '--aggregation', 'raw', '--page-size', '100'];
  const exported = await runExport(exporter, [...exportArguments, '--out', outDir]);
  t.equal(exported.code, 0, exported.stderr.trim().split('\n').at(-1) ?? '');
  const loadsBefore = ingests.loads();
  const during = await runExport(exporter, ['--since-last', '--out', outDir]);
  t.equal(during.code, 0, `--since-last during the ingests: ${during.stderr.trim().split('\n').at(-1)}`);
  t.match(during.stderr, /delta 1 written/, 'it found what landed during the export');
  // a few more loads after it, for the last --since-last to find
  const loadsDuring = ingests.loads();
  while (ingests.loads() < loadsDuring + 6) await sleep(10);
  running = false;
  await ingests.done;
  t.ok(
    loadsBefore >= 3 && loadsDuring > loadsBefore,
    `loads landed during the export and the first delta (${loadsBefore}, ${loadsDuring})`,
  );
  const last = await runExport(exporter, ['--since-last', '--out', outDir]);
  t.equal(last.code, 0, `--since-last after them: ${last.stderr.trim().split('\n').at(-1)}`);
  t.match(last.stderr, /delta 2 written/);

  // the copy: the unit files, then each raw delta applied in order as an upsert
  const copy = new Map<string, number>();
  const files = (await readdir(outDir)).sort();
  const rows = async (file: string) => {
    const [header, ...lines] = (await readFile(join(outDir, file), 'utf8')).trimEnd().split('\n');
    const names = header!.split(',');
    return lines.map((line) => Object.fromEntries(line.split(',').map((cell, i) => [names[i]!, cell])));
  };
  for (const file of files.filter((name) => /^cooling-unit-\d+\.csv$/.test(name))) {
    for (const row of await rows(file)) copy.set(keyOf(row as never), Number(row.value));
  }
  const deltas = files.filter((name) => /^delta-\d+-raw\.csv$/.test(name));
  t.equal(deltas.length, 2, 'two raw deltas, one of each --since-last');
  for (const file of deltas) for (const row of await rows(file)) copy.set(keyOf(row as never), Number(row.value));

  const database = await stored();
  t.equal(copy.size, database.size, `as many records as the database (${database.size})`);
  t.same(
    [...database].filter(([key, value]) => copy.get(key) !== value).slice(0, 5),
    [],
    'every stored reading in the copy, with its value',
  );
  t.same([...copy.keys()].filter((key) => !database.has(key)).slice(0, 5), [], 'nothing in the copy that is not stored');
});
