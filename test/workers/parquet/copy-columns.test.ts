// The Parquet thread's decoder (workers/parquet/copy-columns.ts) on binary COPY streams PostgreSQL
// wrote (the bulk pull's own statement, raw readings and hourly aggregates): fed through one
// chunk its caller overwrites as soon as push() returns (the thread's input slots are refilled
// then), in sizes that split tuples anywhere, into row groups that fill mid-chunk, it decodes
// every record as one whole push does; and a decoder left in the middle of a stream decodes the
// next from its header after restart() (a thread keeps its decoders for its next streams).
import t from 'tap';
import { streamSlice } from '../../../src/sensors/bulk.js';
import { readingChunks } from '../../../src/sensors/generate.js';
import { CopyColumns } from '../../../workers/parquet/copy-columns.js';
import { createTestDatabase } from '../../helpers/db.js';
import { createCompany } from '../../helpers/fixtures.js';
import { loadReadings } from '../../helpers/sensor-world.js';

const CAPACITY = 100;
const END = new Date('2026-03-04T00:00:00Z');
const DAY_MS = 86_400_000;

type Record = [bigint, number, number, number, number, number | null, number | null];

/** Takes the records of a full (or last) group out of the columns. */
function take(decoder: CopyColumns, into: Record[]) {
  const c = decoder.columns;
  for (let row = 0; row < c.rows; row++) {
    const present = (c.present[row >> 3]! & (1 << (row & 7))) !== 0;
    into.push([
      c.timestamps[row]!,
      c.coolingUnitIds[row]!,
      c.specificationTypes[row]!,
      c.values[row]!,
      c.sampleCounts[row]!,
      present ? c.mins[row]! : null,
      present ? c.maxes[row]! : null,
    ]);
  }
}

/**
 * Every record of `stream`, pushed `size` bytes at a time through one chunk overwritten after
 * each push; without a size, the stream itself in one push.
 */
function decode(decoder: CopyColumns, stream: Buffer, size?: number): { records: Record[]; fullMidChunk: number } {
  const records: Record[] = [];
  const chunk = new Uint8Array(size ?? 0);
  let at = 0;
  let fullMidChunk = 0;
  decoder.reset();
  for (;;) {
    decoder.decode();
    if (decoder.full) {
      if (at < stream.length) fullMidChunk++;
      take(decoder, records);
      decoder.reset();
      continue;
    }
    if (decoder.ended) break;
    if (at >= stream.length) throw new Error('the stream ended without its trailer');
    if (size === undefined) {
      decoder.push(stream);
      at = stream.length;
      continue;
    }
    const length = Math.min(size, stream.length - at);
    chunk.set(stream.subarray(at, at + length));
    at += length;
    decoder.push(chunk.subarray(0, length));
    // the caller's chunk is its own again: what the decoder still needs of it must be its copy
    chunk.fill(0xaa);
  }
  take(decoder, records);
  if (!decoder.complete) throw new Error('bytes after the trailer');
  return { records, fullMidChunk };
}

t.test('binary COPY streams of the bulk pull, decoded', async (t) => {
  const db = await createTestDatabase(t);
  const company = await createCompany(db.pool, 'Decoder Co');
  const text = [...readingChunks({ units: 3, firstUnitId: company.unitIds[0]!, days: 3, end: END, seed: 5 })].join('');
  const loaded = await loadReadings(db, text, () => END);
  t.equal(loaded.inserted, 3 * 2 * 3 * 96);
  const slice = async (aggregation: 'raw' | 'hourly') => {
    const { body, done } = await streamSlice(
      db.pool,
      {
        unitIds: company.unitIds,
        types: ['TEMPERATURE', 'HUMIDITY'],
        fromMs: END.getTime() - 3 * DAY_MS,
        toMs: END.getTime(),
        aggregation,
        format: 'parquet',
      },
      60_000,
    );
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    await done;
    return Buffer.concat(chunks);
  };
  const raw = await slice('raw');
  const hourly = await slice('hourly');

  await t.test('through one reused chunk, in any sizes, as one whole push', async (t) => {
    for (const [name, stream, records] of [
      ['raw', raw, 3 * 2 * 3 * 96],
      ['hourly', hourly, 3 * 2 * 3 * 24],
    ] as const) {
      const whole = decode(new CopyColumns(CAPACITY), stream);
      t.equal(whole.records.length, records, `${name}: every record`);
      t.ok(
        name === 'raw'
          ? whole.records.every((r) => r[5] === null && r[6] === null)
          : whole.records.every((r) => r[5] !== null && r[6] !== null),
        `${name}: min and max ${name === 'raw' ? 'null' : 'present'}`,
      );
      for (const size of [7, 61, 997, 4096]) {
        const chunked = decode(new CopyColumns(CAPACITY), stream, size);
        t.same(chunked.records, whole.records, `${name}, ${size}-byte chunks: the same records`);
        t.ok(chunked.fullMidChunk > 0, `${name}, ${size}-byte chunks: ${chunked.fullMidChunk} groups filled mid-chunk`);
      }
    }
  });

  await t.test('restart(): a decoder left mid-stream takes the next stream from its header', async (t) => {
    const decoder = new CopyColumns(CAPACITY);
    // half a raw stream, a tuple cut in two at its end
    decoder.push(raw.subarray(0, Math.floor(raw.length / 2) + 3));
    decoder.decode();
    t.ok(decoder.full, 'the abandoned stream filled a group');
    decoder.restart();
    t.same(decode(decoder, hourly, 997).records, decode(new CopyColumns(CAPACITY), hourly).records, 'the next stream, whole');
  });
});
