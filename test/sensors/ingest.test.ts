// The ingest's own machinery: the binary COPY encoding read back exactly, the CSV fast path
// answering as the general one does (both on the local PostgreSQL); and in both storage profiles
// (test/helpers/sensor-world.ts), batches loading at once keeping the aggregates exact, late
// batches among them, the INSERT transport loading what COPY loads, and bad rows reported by line
// number, skipped or aborting, whole batches only.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import t, { type Test } from 'tap';
import { COPY_COLUMNS, encodeReadings } from '../../src/sensors/copy-binary.js';
import { lineRuns, parseReadings, ReadingValidator, type ParsedLine, type Reading } from '../../src/sensors/formats.js';
import { readingChunks } from '../../src/sensors/generate.js';
import { IngestAborted, type IngestOptions } from '../../src/sensors/ingest.js';
import { materializeAggregates } from '../../src/sensors/store.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createCompany } from '../helpers/fixtures.js';
import { createProfileDatabase, createSensorWorld, eachProfile, expectConsistent, loadReadings } from '../helpers/sensor-world.js';

const NOW = new Date('2026-03-15T12:00:00Z');
const HEADER = 'cooling_unit_id,specification_type,recorded_at,value';

async function parse(text: string): Promise<ParsedLine[]> {
  const parsed: ParsedLine[] = [];
  for await (const run of parseReadings(lineRuns(Readable.from([text])), 'csv', new ReadingValidator(() => NOW))) parsed.push(...run);
  return parsed;
}

t.test('binary COPY: every row reads back exactly, microseconds and float8 bits included', async (t) => {
  const db = await createTestDatabase(t);
  const instants = [
    '2000-01-01T00:00:00Z',
    '2000-01-01T00:00:00.000001Z',
    '2026-03-14T10:00:00.999999Z',
    '2026-03-14T10:00:00.5+05:30',
    '2026-03-14 10:00-0030',
    '2024-02-29T23:59:59.123456-15:59',
    '2026-03-14T10:00:00+15:59',
    '2026-03-14T24:00:00Z',
    '2026-03-15T12:00Z',
    '2010-06-30T23:59:59.000010z',
    '2026-03-14T10:00:00.1234+14',
  ];
  const values = ['0.1', '-0', '4.35', '1e-300', '5e-324', '1.7976931348623157e308', '123456.78901234567', '-273.15', '+.5e+2', '3.'];
  const lines = instants.map(
    (at, i) => `${i % 2 ? 2147483647 : 1},${i % 2 ? 'HUMIDITY' : 'TEMPERATURE'},${at},${values[i % values.length]}`,
  );
  const readings = (await parse([HEADER, ...lines].join('\n'))) as Reading[];
  t.equal(readings.filter((row) => 'reason' in row).length, 0, 'all valid');

  await db.pool.query(`CREATE TABLE roundtrip (n serial, cooling_unit_id integer, specification_type specification_type,
    recorded_at timestamptz, value double precision)`);
  const client = await db.pool.connect();
  try {
    await pipeline(
      Readable.from([encodeReadings(readings)]),
      client.query(copyFrom(`COPY roundtrip ${COPY_COLUMNS} FROM STDIN WITH (FORMAT binary)`)),
    );
  } finally {
    client.release();
  }
  const micros = "to_char(%s AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US')";
  const { rows } = await db.pool.query<{ unit: number; type: string; stored: string; parsed: string; value: number }>(
    `
    SELECT r.cooling_unit_id AS unit, r.specification_type::text AS type, ${micros.replace('%s', 'r.recorded_at')} AS stored,
           ${micros.replace('%s', 'k.text::timestamptz')} AS parsed, r.value
    FROM roundtrip r JOIN unnest($1::text[]) WITH ORDINALITY AS k (text, n) USING (n) ORDER BY n`,
    [instants],
  );
  t.equal(rows.length, instants.length);
  for (const [i, row] of rows.entries()) {
    t.equal(row.stored, row.parsed, `${instants[i]}: the instant PostgreSQL itself reads from the text`);
    t.same([row.unit, row.type], [readings[i]!.unitId, readings[i]!.type]);
    t.ok(Object.is(row.value, Number(values[i % values.length])), `${values[i % values.length]}: the same float8`);
  }
  t.equal(rows[1]!.stored, '2000-01-01T00:00:00.000001');
  t.equal(rows[5]!.stored, '2024-03-01T15:58:59.123456');
});

t.test('instants the binary format cannot carry are refused, not sent', async (t) => {
  const parsed = await parse(
    [HEADER, '1,TEMPERATURE,1999-12-31T23:59:59.999999Z,1', '1,TEMPERATURE,2026-03-14T10:00:00+16:00,1'].join('\n'),
  );
  t.match(parsed[0], { line: 2, reason: /before 2000/ }, "before PostgreSQL's epoch: a bad row");
  t.match(parsed[1], { line: 3, reason: /not a real instant/ }, 'an offset PostgreSQL refuses: a bad row, not a failed batch');
  const reading = (recordedAtUs: number): Reading => ({
    line: 9,
    unitId: 1,
    type: 'HUMIDITY',
    recordedAt: 'x',
    recordedAtMs: 0,
    recordedAtUs,
    value: 1,
  });
  t.throws(() => encodeReadings([reading(-1)]), RangeError, 'a negative count of microseconds');
  t.throws(() => encodeReadings([reading(0.5)]), RangeError, 'a fraction of a microsecond');
  t.throws(() => encodeReadings([reading(2 ** 53)]), RangeError, 'beyond exact integers');
});

t.test('CSV: the in-place fast path and the general path give the same answers', async (t) => {
  const rows = [
    ['5,TEMPERATURE,2026-03-14T10:00:00Z,4.5', '"5", TEMPERATURE ,"2026-03-14T10:00:00Z", 4.5'],
    ['5,HUMIDITY,2026-03-14T10:00:00.25+01:00,-0.5e1', ' 5,"HUMIDITY",2026-03-14T10:00:00.25+01:00,-0.5e1'],
    ['x5,HUMIDITY,2026-03-14T10:00:00Z,1', '"x5",HUMIDITY,2026-03-14T10:00:00Z,1'],
    ['0,HUMIDITY,2026-03-14T10:00:00Z,1', '0, HUMIDITY,2026-03-14T10:00:00Z,1'],
    ['2147483648,HUMIDITY,2026-03-14T10:00:00Z,1', '"2147483648",HUMIDITY,2026-03-14T10:00:00Z,1'],
    ['5,COLD,2026-03-14T10:00:00Z,1', '5, COLD,2026-03-14T10:00:00Z,1'],
    ['5,HUMIDITY,2026-02-30T10:00:00Z,1', '5,HUMIDITY, 2026-02-30T10:00:00Z,1'],
    ['5,HUMIDITY,2026-03-14T10:00:00Z,1e400', '5,HUMIDITY,2026-03-14T10:00:00Z, 1e400'],
    ['5,HUMIDITY,2026-03-14T10:00:00Z,0x10', '5,HUMIDITY,2026-03-14T10:00:00Z,"0x10"'],
    ['5,HUMIDITY,2026-03-14T10:00:00Z,1.', '5,HUMIDITY,2026-03-14T10:00:00Z, 1.'],
    ['5,HUMIDITY,2026-03-14T10:00:00Z', '5,HUMIDITY, 2026-03-14T10:00:00Z'],
  ];
  const fast = await parse([HEADER, ...rows.map((pair) => pair[0])].join('\n'));
  const general = await parse([HEADER, ...rows.map((pair) => pair[1])].join('\n'));
  t.same(fast, general, 'every row: the same reading or the same reason');
  t.same(
    fast.map((row) => ('reason' in row ? 'bad' : 'ok')),
    ['ok', 'ok', 'bad', 'bad', 'bad', 'bad', 'bad', 'bad', 'bad', 'ok', 'bad'],
  );
  t.match(fast[2], { reason: 'cooling_unit_id must be a positive whole number, not "x5"' });
  t.match(fast[7], { reason: 'value must be a finite number, not "1e400"' });
  t.match(fast[10], { reason: 'expected 4 fields, found 3' });

  const crlf = await parse(
    `value,recorded_at,specification_type,cooling_unit_id\r\n\r\n4.5,2026-03-14T10:00:00Z,TEMPERATURE,5\r\n  \r\n1,nope,HUMIDITY,5\r\n2,2026-03-14T10:15:00Z,HUMIDITY,6`,
  );
  t.same(
    crlf.map((row) => row.line),
    [3, 5, 6],
    'CRLF, blank lines and a last line without newline keep their numbers',
  );
  t.match(crlf[0], {
    unitId: 5,
    type: 'TEMPERATURE',
    value: 4.5,
    recordedAtUs: Date.parse('2026-03-14T10:00:00Z') * 1000 - Date.UTC(2000, 0, 1) * 1000,
  });
  t.match(crlf[1], { reason: /recorded_at must be an ISO 8601 timestamp/ });
  t.match(crlf[2], { unitId: 6, value: 2 });
});

/** Raw, hourly and daily counts, and hourly rows that disagree with their readings. */
async function totals(db: TestDatabase) {
  const { rows } = await db.pool.query<{
    raw: number;
    hourly: number;
    daily: number;
    hours: number;
    hourly_rows: number;
    mismatched: number;
  }>(`
    WITH raw AS (
      SELECT date_bin('1 hour', recorded_at, '2000-01-01 00:00:00+00') AS bucket, cooling_unit_id, specification_type,
             avg(value) AS value, min(value) AS min, max(value) AS max, count(*) AS n
      FROM sensor_readings GROUP BY 1, 2, 3)
    SELECT (SELECT count(*) FROM sensor_readings)::int AS raw,
           (SELECT sum(sample_count) FROM sensor_readings_hourly)::int AS hourly,
           (SELECT sum(sample_count) FROM sensor_readings_daily)::int AS daily,
           (SELECT sum(hour_count) FROM sensor_readings_daily)::int AS hours,
           (SELECT count(*) FROM sensor_readings_hourly)::int AS hourly_rows,
           (SELECT count(*) FROM raw r FULL JOIN sensor_readings_hourly h USING (bucket, cooling_unit_id, specification_type)
            WHERE h.bucket IS NULL OR r.bucket IS NULL OR abs(h.value - r.value) > 1e-9 OR h.min <> r.min OR h.max <> r.max
              OR h.sample_count <> r.n)::int AS mismatched`);
  return rows[0];
}

eachProfile(t, async (t, profile) => {
  const parallelWorld = async (t: Test) => {
    const db = await createProfileDatabase(t, profile);
    const company = await createCompany(db.pool, 'Parallel Co');
    const days = (end: string) =>
      [...readingChunks({ units: 3, firstUnitId: company.unitIds[0], days: 2, end: new Date(end), seed: 5 })].join('');
    const load = (text: string, options: IngestOptions) => loadReadings(db, text, () => NOW, options);
    return { db, days, load };
  };

  t.test('batches loading at once keep the aggregates exact', async (t) => {
    const { db, days, load } = await parallelWorld(t);
    const csv = days('2026-03-10T00:00:00Z');
    // 37 readings a batch: every batch shares an hour (and a day) with the one loading beside it
    t.same(await load(csv, { batchSize: 37 }), { rows: 1152, inserted: 1152, duplicates: 0, bad: 0, batches: 32, abortedAt: null });
    t.match(await load(csv, { batchSize: 500 }), { inserted: 0, duplicates: 1152 }, 'again: all duplicates');
    t.same(
      await totals(db),
      { raw: 1152, hourly: 1152, daily: 1152, hours: 288, hourly_rows: 288, mismatched: 0 },
      "raw = hourly = daily counts; every hour's mean, min, max and count agree with its readings",
    );
  });

  // timescale: the aggregates materialized up to March 10th, so the two days before are late
  // readings, each batch re-materializing its buckets after it commits
  const lateBatches = async (t: Test, loadsInFlight: number, todo?: string) => {
    const extra = todo ? { todo } : {};
    const { db, days, load } = await parallelWorld(t);
    t.match(await load(days('2026-03-10T00:00:00Z'), { batchSize: 500 }), { inserted: 1152 });
    await materializeAggregates(db.pool, profile, new Date('2026-03-10T00:00:00Z'));
    const late = await load(days('2026-03-08T00:00:00Z'), { batchSize: 37, loadsInFlight }).catch((error: Error) => error);
    t.same(
      late,
      { rows: 1152, inserted: 1152, duplicates: 0, bad: 0, batches: 32, abortedAt: null },
      'two days late, every batch loaded once',
      extra,
    );
    t.same(await totals(db), { raw: 2304, hourly: 2304, daily: 2304, hours: 576, hourly_rows: 576, mismatched: 0 }, 'still exact', extra);
    await expectConsistent(t, db, 'after late batches', extra);
  };
  t.test('late batches keep the aggregates exact', (t) => lateBatches(t, 1));
  // With two batches in flight (the default), the timescale profile's refreshes of neighbouring
  // late batches would overlap, which TimescaleDB refuses (55P03): the ingest runs them one at a
  // time and waits out a refresh already running (a policy's)
  t.test('late batches loading at once keep the aggregates exact', (t) => lateBatches(t, 2));

  t.test('the INSERT transport loads what COPY loads', async (t) => {
    const db = await createProfileDatabase(t, profile);
    const company = await createCompany(db.pool, 'Insert Co');
    const csv = [
      ...readingChunks({ units: 2, firstUnitId: company.unitIds[0], days: 2, end: new Date('2026-03-01T00:00:00Z'), seed: 9 }),
    ].join('');
    const half = csv
      .split('\n')
      .filter((_, index) => index % 2 === 0)
      .join('\n');
    t.same(
      await loadReadings(db, half, () => NOW, { transport: 'insert', batchSize: 100 }),
      { rows: 384, inserted: 384, duplicates: 0, bad: 0, batches: 4, abortedAt: null },
      'INSERT: every other reading',
    );
    t.same(
      await loadReadings(db, csv, () => NOW, { transport: 'insert', batchSize: 300 }),
      { rows: 768, inserted: 384, duplicates: 384, bad: 0, batches: 3, abortedAt: null },
      'INSERT: all of them, half duplicates',
    );
    t.match(await loadReadings(db, csv, () => NOW, { transport: 'copy' }), { inserted: 0, duplicates: 768 }, 'COPY finds them all');
    await expectConsistent(t, db, 'after the INSERT transport');
  });

  t.test('bad rows by line number, skipped or aborting, whole batches only', async (t) => {
    const { a3, one, load } = await createSensorWorld(t, profile);
    const count = async () =>
      (await one<{ n: number }>('SELECT count(*)::int AS n FROM sensor_readings WHERE cooling_unit_id = $1', [a3])).n;
    const rows = (hours: number[]) => hours.map((h) => `${a3},TEMPERATURE,2026-03-15T0${h}:01:00Z,4.5`);
    const file = [
      'cooling_unit_id,specification_type,recorded_at,value',
      ...rows([1, 2, 3]),
      `${a3},TEMPERATURE,yesterday,4.5`,
      ...rows([4]),
      `${a3},COLD,2026-03-15T05:01:00Z,1`,
      `999999,HUMIDITY,2026-03-15T06:01:00Z,1`,
      `${a3},HUMIDITY,2026-03-15T07:01:00Z,abc`,
      ...rows([8, 9]),
    ].join('\n');

    const start = await count();
    const bad: { line: number; reason: string }[] = [];
    const skipped = await load(file, { onError: 'skip', batchSize: 3, onBadRow: (row) => bad.push(row) });
    // rows failing validation are reported as read, unknown units when their batch loads
    t.same(
      bad.map((row) => row.line).sort((x, y) => x - y),
      [5, 7, 8, 9],
      'each bad row by its line number',
    );
    const reason = (line: number) => bad.find((row) => row.line === line)?.reason;
    t.match(reason(5), /recorded_at/);
    t.match(reason(7), /specification_type/);
    t.match(reason(8), /cooling unit 999999 does not exist/);
    t.match(reason(9), /value/);
    t.match(skipped, { rows: 10, inserted: 6, bad: 4 });
    t.equal(await count(), start + 6, 'skip: the good rows load');

    const aborting = [
      'cooling_unit_id,specification_type,recorded_at,value',
      ...rows([1, 2, 3]).map((r) => r.replace(':01:', ':02:')),
      ...rows([4, 5]).map((r) => r.replace(':01:', ':02:')),
      `${a3},TEMPERATURE,2026-03-15T06:02:00Z,oops`,
    ].join('\n');
    const error = await load(aborting, { onError: 'abort', batchSize: 3 }).catch((e: unknown) => e);
    t.ok(error instanceof IngestAborted, 'abort stops the run');
    t.equal((error as IngestAborted).bad.line, 7);
    t.equal(await count(), start + 6 + 3, 'the first batch loaded; the batch holding the bad row did not, not even its good rows');
  });
});
