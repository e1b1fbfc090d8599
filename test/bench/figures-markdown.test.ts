// A run's record (bench/kit/run-record.ts) keeps what the run measured, and the tables the docs
// show (bench/kit/figures-markdown.ts) say it: every target with its verdict, the sensor scripts
// per profile, throughput per scenario, the scale curve with its ratios judged, and what the line
// is (commit, machine, partial, imported).
import { join } from 'node:path';
import t from 'tap';
import { loadFiguresMarkdown, scaleFiguresMarkdown } from '../../bench/kit/figures-markdown.js';
import { HISTORY, repoRoot } from '../../bench/kit/checkout.js';
import { formatScaleTable, formatTable, pad } from '../../bench/kit/report.js';
import { type LoadRecord, readRecords, type ScaleRecord, VERDICT_WORDS } from '../../bench/kit/run-record.js';
import { type TargetKey, TARGET_GOALS } from '../../bench/kit/targets.js';
import { clean, loadRecord, scaleRecord } from './run-fixtures.js';

const lines = (markdown: string) => markdown.split('\n');

t.test("a release run: the record keeps the run's figures", async (t) => {
  const record = loadRecord();
  t.same(JSON.parse(JSON.stringify(record)), record, 'one JSON line holds it whole');
  t.equal(record.kind, 'load');
  t.same(record.commit, clean);
  t.match(record.machine, { cpuModel: 'AMD EPYC', cores: 2, memoryGb: 23.5, node: 'v20.20.2', loadAverage: { start: 0.4, end: 1.2 } });
  t.same(
    record.targets.map((target) => [target.id, target.verdict]),
    [
      ['P1', 'miss'],
      ['P2', 'pass'],
      ['P3', 'pass'],
      ['P4', 'pass'],
      ['P5', 'not measured'],
      ['P6', 'pass'],
      ['P7', 'not measured'],
      ['P8', 'pass'],
      ['P16', 'not measured'],
      ['P17', 'not measured'],
      ['P19', 'not measured'],
    ],
  );
  t.equal(record.targets[0]!.figure, '0.96x req/s (2300 vs 2400), p99 1.50x (30.0 vs 20.0 ms)');
  t.equal(record.targets[6]!.figure, 'revocation was not run (--only)', 'a target not measured keeps its reason as its figure');
  const small = record.scenarios.find((scenario) => scenario.id === 'small-page')!;
  t.match(small.servers.project!.loads[0], {
    label: 'revenue page_size 10',
    okPerS: 2300,
    p50Ms: 8,
    p97_5Ms: 8,
    p99Ms: 30,
    non2xx: 0,
    errors: 0,
  });
  t.same(record.scenarios.find((scenario) => scenario.id === 'large-pages')!.servers.project!.peakRssMb, [243, 239]);
  t.match(
    record.targets[7]!.detail,
    /file-backed pages \(the node binary and libraries, one copy shared by the workers\): 61, 58 MB$/,
    "P8 says how much of each worker's highest sample is the mapped binary and libraries",
  );
  t.equal(record.scenarios.find((scenario) => scenario.id === 'sensor-hourly')!.notMeasured, 'not measured: sensor-data not available');
  t.same(
    record.sensorScripts!.profiles,
    { postgres: { host: '127.0.0.1:5432', reason: null }, timescale: { host: null, reason: 'no TimescaleDB found' } },
    'a server is recorded by its host only',
  );
});

t.test('a release run: the tables', async (t) => {
  const markdown = loadFiguresMarkdown(loadRecord());
  t.match(
    markdown.replace(/\n/g, ' '),
    /^`npm run bench` \(full, 15 s runs, 2 per server\), 2026-12-01 09:05 UTC, commit abc1234, 15 min 4 s\./,
  );
  t.match(
    markdown.replace(/\n/g, ' '),
    /2 cores \(AMD EPYC\) shared by both clusters, PostgreSQL, Redis and the load generator; load average 0\.4 at the start and 1\.2 at the end; Node v20\.20\.2, PostgreSQL 15\.20, Redis 7\.0\.15\./,
  );
  t.notMatch(markdown, /busy|Partial|Imported|uncommitted/);
  const rows = lines(markdown);
  for (const row of [
    '| target | verdict | figure |',
    '| P1 | MISSED | 0.96x req/s (2300 vs 2400), p99 1.50x (30.0 vs 20.0 ms) |',
    '| P7 | NOT MEASURED | revocation was not run (--only) |',
    '| (a) `sensor-hourly-aggregates` | P4 <= 1.3x the floor; postgres >= 10x raw | PASS: 11.2x (13.00 ms vs 145.60 ms) | NOT MEASURED: no TimescaleDB found |',
    '| (c) `sensor-ingest` | P6 >= 0.6x, and >= 100k readings/s | PASS: 0.95x (530000 vs 557000 readings/s) | NOT MEASURED: no TimescaleDB found |',
    '| scenario | project 2xx/s | reference 2xx/s |',
    '| small-page | 2,300 | 2,400 |',
    '| sensor-hourly | not measured: sensor-data not available | |',
    '| management | 1,134 | 1,500 |',
    '| large-pages | 7.5 | 9.0 |',
  ])
    t.ok(rows.includes(row), row);
  t.match(markdown, /P2 \| PASS \| postgres pass 2\.40x/, "P2 is the scripts' figure on each profile");
  const caption = rows.slice(0, rows.indexOf(''));
  t.ok(
    caption.every((line) => line.length <= 100),
    "the caption is wrapped at the doc's width",
  );
});

t.test('what the line is: dirty, moved, busy, partial, imported; a pipe in a figure', async (t) => {
  const record = loadRecord(['--quick', '--only small-page'], {
    ...clean,
    dirty: true,
    movedTo: 'fedcba9876543210fedcba9876543210fedcba98',
  });
  record.machine.loadAverage = { start: 3.9, end: 1.0 };
  record.targets[0]!.figure = 'a | b';
  const markdown = loadFiguresMarkdown({ ...record, imported: 'from somewhere' }).replace(/\n(?!\|)/g, ' ');
  t.match(markdown, 'commit abc1234 with uncommitted changes (HEAD moved to fedcba9 during the run)');
  t.match(markdown, 'load average 3.9 at the start and 1.0 at the end (the machine was busy besides: noisier figures)');
  t.match(markdown, 'Partial run (--quick; --only small-page): not a release run.');
  t.match(markdown, 'Imported from somewhere.');
  t.ok(lines(markdown).includes('| P1 | MISSED | a \\| b |'), 'a pipe does not split the cell');
});

t.test('the imported line renders what docs/benchmarks.md published by hand', async (t) => {
  const records = readRecords(join(repoRoot, HISTORY));
  const load = records.find((record): record is LoadRecord => record.kind === 'load' && record.imported !== undefined);
  const scale = records.find((record): record is ScaleRecord => record.kind === 'scale' && record.imported !== undefined);
  if (!load || !scale) throw new Error(`${HISTORY} has lost its imported lines`);
  const loadRows = lines(loadFiguresMarkdown(load));
  t.match(loadRows.join(' '), '2026-11-26 22:49 UTC, commit a6d1880, 15 min 4 s.');
  for (const row of [
    '| P1 | MISSED | 0.99x req/s (2,380 vs 2,406); p99 1.24x (25.5 vs 20.5 ms) |',
    '| P8 | PASS | 243 MB peak per worker (large-pages: 237 and 243 MB) |',
    '| (b) `sensor-deep-pages` | P3 <= 1.1x | PASS: 1.00x (7.39 vs 7.37 ms) | MISSED: 1.18x (8.08 vs 6.82 ms) |',
    '| (a) `sensor-hourly-aggregates` | P4 >= 10x | PASS: 10.8x (13.7 vs 147 ms) | MISSED: 5.8x (15.8 vs 91 ms) |',
    '| small-page | 2,380 | 2,406 |',
    '| mixed | 41.8 | |',
  ])
    t.ok(loadRows.includes(row), row);
  const scaleRows = lines(scaleFiguresMarkdown(scale));
  for (const row of [
    '| postgres | 1 M | 185 ms | 7.0 ms | 6.6 ms | 4.3 ms | 138k/s | 134.9 B |',
    '| | 100 M / 1 M | 1.03x | 1.37x | 1.47x | 0.77x | 0.96x | |',
    '| | 100 M / 1 M beside it | 1.00x | 0.99x | 1.03x | 1.04x | 0.97x | |',
  ])
    t.ok(scaleRows.includes(row), row);
  t.match(scaleRows.join(' '), 'Every P9 target passed on both profiles.');
});

t.test('a scale curve: the record and its table, a missed ratio marked', async (t) => {
  const record = scaleRecord();
  t.same(JSON.parse(JSON.stringify(record)), record);
  const postgres = record.profiles[0]!;
  t.equal(postgres.steps[0]!.bytesPerReading, 135, 'readings and aggregates, per reading');
  t.match(postgres.ratios, { of: '100M', against: 'beside', ingest: 132_000 / 139_000 });
  t.equal(postgres.ratios!.latency.hourlyYear, 1.6, 'the 100M step against the 1M store measured beside it');
  t.match(
    record.targets.find((target) => target.profile === 'postgres' && target.measure === 'hourlyYear'),
    { id: 'P9', verdict: 'miss', value: 1.6 },
  );
  t.equal(record.profiles[1]!.ratios, null);

  const markdown = scaleFiguresMarkdown(record);
  const rows = lines(markdown);
  t.match(
    rows.join(' '),
    '`npm run bench -- --scale` (up to 100 M), 2026-12-02 07:00 UTC, commit abc1234, 30 min 0 s; peak 13.05 GB of databases.',
  );
  t.match(rows.join(' '), 'P9 missed: postgres hourly year (1.60x). Not judged on timescale: no TimescaleDB found.');
  for (const row of [
    '| profile | size | hourly year | daily year | raw page 500 | newest-day raw page | live ingest | bytes a reading |',
    '| postgres | 1 M | 180 ms | 7.0 ms | 6.5 ms | 4.3 ms | 140k/s | 135.0 B |',
    '| | 100 M | 288 ms | 9.6 ms | 9.7 ms | 3.3 ms | 132k/s | 135.0 B |',
    '| | 100 M / 1 M beside it | 1.60x, missed | 1.33x | 1.47x | 0.75x | 0.95x | |',
    '| timescale | not measured: no TimescaleDB found | | | | | | |',
  ])
    t.ok(rows.includes(row), row);
});

t.test('the tables on stdout are rendered from the record: every load, the ratio row, a verdict line per target', async (t) => {
  const rows = lines(formatTable(loadRecord())).map((row) => row.trimEnd());
  t.match(rows[0], /^coldtrack-api benchmark \(full\): 15 s runs, 2 per server alternated project\/reference; 2 cores/);
  t.ok(rows.some((row) => /^small-page +revenue page_size 10 +project +2300\.0 +8\.0 +8\.0 +30\.0 +0 +0 +\d+\/\d+/.test(row)));
  t.ok(
    rows.some((row) => /^ +ratio +0\.96x +1\.14x +1\.14x +1\.50x$/.test(row)),
    'project / reference',
  );
  t.ok(rows.includes(`${'sensor-hourly'.padEnd(16)} not measured: sensor-data not available`));
  t.ok(
    rows.some((row) => /^P4 +PASS +11\.2x/.test(row)),
    'the scripts side by side',
  );
  const verdicts = rows.slice(rows.indexOf('Targets') + 1);
  t.equal(verdicts.length, loadRecord().targets.length, 'one line per target');
  for (const [i, target] of loadRecord().targets.entries()) {
    const { title, goal } = TARGET_GOALS[target.id as TargetKey];
    t.ok(
      verdicts[i]!.startsWith(`${target.id} ${pad(VERDICT_WORDS[target.verdict], 12)} ${title} (${goal}): `),
      `${target.id}: verdict, title, goal`,
    );
  }
  const scale = lines(formatScaleTable(scaleRecord()));
  t.ok(scale.some((row) => /^ +100M +100,070,976 .* 288 +9\.6 +9\.7 +3\.3 +132,000 +135\.0 +140\.0 +13\.05 GB/.test(row)));
  t.ok(scale.some((row) => /^ +1M beside +982,464 +180 +7\.2 +6\.6 +4\.4 +139,000$/.test(row)));
  t.ok(scale.includes('MISS P9 postgres hourly year latency (100M <= 1.5x 1M): ' + scaleRecord().targets[0]!.figure));
  t.match(scale.join('\n'), /NOT MEASURED P9 timescale ingest rate \(100M >= [\d.]+x 1M\): no TimescaleDB found/);
});
