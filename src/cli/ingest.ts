// `npm run ingest -- FILE|- [--format csv|ndjson] [--on-error skip|abort] [--batch-size N]`:
// loads sensor readings into DATABASE_URL (src/sensors/ingest.ts), with a progress bar on stderr
// (rows, rows/s, ETA when the size is known). Bad rows are reported with their line numbers: a
// reading of a unit that does not exist, or of a soft-deleted unit from its deletion on, is one; a
// deleted unit named in the file gets a line saying so (its earlier readings load as its history).
// Exit status: 0 loaded (bad rows skipped, if any), 1 aborted or failed, 2 usage.
import { createReadStream, statSync } from 'node:fs';
import { Transform } from 'node:stream';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import pg from 'pg';
import { HeaderError, lineRuns, parseReadings, ReadingValidator, type ReadingFormat } from '../sensors/formats.js';
import { DEFAULT_BATCH_SIZE, IngestAborted, ingestReadings, type IngestStats } from '../sensors/ingest.js';
import { commandDatabase } from '../db/embedded-handoff.js';

const usage =
  'usage: npm run ingest -- FILE|- [--format csv|ndjson] [--on-error skip|abort] [--batch-size N]\n' +
  '  FILE        CSV (header: cooling_unit_id,specification_type,recorded_at,value) or NDJSON; - reads stdin\n' +
  '  --format    default: from the file name (.csv, .ndjson/.jsonl), else from the first line\n' +
  `  --on-error  abort (default): stop at the first bad row, its batch not loaded; skip: report it and go on\n` +
  `  --batch-size readings per transaction (default ${DEFAULT_BATCH_SIZE})\n` +
  '  A reading must name a cooling unit of the database: one that does not exist is a bad row, and so is one\n' +
  '  of a deleted unit recorded at or after its deletion; its readings from before then load as its history\n' +
  '  (one line names each deleted unit). Exit status: 0 loaded, 1 aborted or failed, 2 usage.';

function fail(message: string, status = 2): never {
  console.error(message);
  if (status === 2) console.error(usage);
  process.exit(status);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      format: { type: 'string' },
      'on-error': { type: 'string', default: 'abort' },
      'batch-size': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
} catch (error) {
  fail((error as Error).message);
}
const { values, positionals } = parsed;
if (values.help) {
  console.log(usage);
  process.exit(0);
}
if (positionals.length !== 1) fail('give exactly one FILE, or - for stdin');
const source = positionals[0]!;
const onError = values['on-error'];
if (onError !== 'skip' && onError !== 'abort') fail('--on-error must be skip or abort');
if (values.format !== undefined && values.format !== 'csv' && values.format !== 'ndjson') fail('--format must be csv or ndjson');
const batchText = values['batch-size'] ?? String(DEFAULT_BATCH_SIZE);
if (!/^\d+$/.test(batchText) || Number(batchText) < 1 || Number(batchText) > 1_000_000) fail('--batch-size must be 1..1000000');
const database = commandDatabase('npm run ingest');
if ('problem' in database) fail(database.problem, 1);
const databaseUrl = database.url;

const format: ReadingFormat | 'auto' =
  (values.format as ReadingFormat | undefined) ?? (/\.csv$/i.test(source) ? 'csv' : /\.(nd)?jsonl?$/i.test(source) ? 'ndjson' : 'auto');
let totalBytes: number | null = null;
if (source !== '-') {
  try {
    totalBytes = statSync(source).size;
  } catch {
    fail(`cannot read ${source}`, 1);
  }
}
let bytesRead = 0;
// counts bytes on their way to the line reader (for the bar's percentage and ETA)
const input = (source === '-' ? process.stdin : createReadStream(source)).pipe(
  new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytesRead += chunk.length;
      done(null, chunk);
    },
  }),
);

const started = Date.now();
let latest: IngestStats = { rows: 0, inserted: 0, duplicates: 0, bad: 0, batches: 0, abortedAt: null };
let rowsRead = 0;
const rate = () => Math.round(latest.inserted / Math.max(0.001, (Date.now() - started) / 1000));

// the bar draws on a terminal only; a log or CI gets the bad rows and the summary line
const bars = process.stderr.isTTY
  ? new cliProgress.MultiBar(
      {
        format:
          totalBytes === null
            ? '{rows} rows read | {loaded} loaded | {rate} readings/s'
            : '{bar} {percentage}% | {rows} rows read | {loaded} loaded | {rate} readings/s | ETA {eta_formatted}',
        hideCursor: true,
        etaBuffer: 50,
      },
      cliProgress.Presets.shades_classic,
    )
  : null;
const bar = bars?.create(totalBytes ?? 1, 0, { rows: 0, loaded: 0, rate: 0 });
const show = () => bar?.update(totalBytes === null ? 0 : bytesRead, { rows: rowsRead, loaded: latest.inserted, rate: rate() });
const say = (line: string) => (bars ? bars.log(`${line}\n`) : console.error(line));
const tick = setInterval(show, 250);

// three connections: two batches loading at once (src/sensors/ingest.ts) and one preparing the next
// TimeZone SET per connection rather than sent as a start-up parameter, which PgBouncer refuses; it
// tracks a SET TimeZone and restores it on every server connection it lends (DB_POOLER=transaction)
const pool = new pg.Pool({
  connectionString: databaseUrl,
  max: 3,
  application_name: 'coldtrack-ingest',
  onConnect: async (client) => void (await client.query("SET TimeZone TO 'UTC'")),
});
const counted = async function* (runs: ReturnType<typeof parseReadings>) {
  for await (const run of runs) {
    rowsRead += run.length;
    yield run;
  }
};
let status = 0;
let unknownUnits = 0;
try {
  const rows = counted(parseReadings(lineRuns(input), format, new ReadingValidator()));
  latest = await ingestReadings(pool, rows, {
    batchSize: Number(batchText),
    onError,
    onBadRow: (bad) => {
      if (/^cooling unit \d+ does not exist$/.test(bad.reason)) unknownUnits++;
      say(`line ${bad.line}: ${bad.reason}`);
    },
    onDeletedUnit: (unitId, deletedAt) =>
      say(
        `cooling unit ${unitId} was deleted at ${deletedAt.toISOString()}: its readings from before then load as its history, later ones are bad rows`,
      ),
    onBatch: (stats) => {
      latest = stats;
    },
  });
} catch (error) {
  status = 1;
  if (error instanceof IngestAborted) latest = error.stats;
  else say(`ingest failed: ${error instanceof HeaderError || error instanceof Error ? error.message : String(error)}`);
  // 42P01: a relation of the sensor store is missing: the database was never migrated
  if ((error as { code?: string }).code === '42P01') say('the database is not migrated yet: run npm run migrate first');
} finally {
  clearInterval(tick);
  show();
  bars?.stop();
  // readings name units the database must already hold: an empty platform needs its units first
  if (unknownUnits > 0) {
    const { rows } = await pool.query<{ units: number }>('SELECT count(*)::int AS units FROM cooling_units').catch(() => ({ rows: [] }));
    if (rows[0]?.units === 0) say("this database has no cooling units yet: load them first (npm run seed -- --demo loads the demo's)");
  }
  await pool.end();
}
const seconds = (Date.now() - started) / 1000;
console.error(
  `${latest.abortedAt !== null ? `aborted at line ${latest.abortedAt}. ` : ''}` +
    `readings loaded: ${latest.inserted}, duplicates ignored: ${latest.duplicates}, bad rows` +
    `${onError === 'skip' ? ' skipped' : ''}: ${latest.bad}, in ${seconds.toFixed(1)} s (${rate()} readings/s)`,
);
process.exit(status);
