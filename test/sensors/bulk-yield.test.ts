// Bulk streams yield to the process's other requests (src/sensors/bulk-yield.ts): a late event
// loop holds every stream's next chunk while other requests were answered within the last second,
// and never when the process only streams or BULK_YIELD_LAG_MS is 0.
import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { createBulkYield } from '../../src/sensors/bulk-yield.js';

/** Keeps the event loop busy for `ms`, as a CPU the pages wait for would. */
function blockLoop(ms: number) {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

/** Chunks that came out of `stream` so far. */
function collect(stream: Readable) {
  const chunks: string[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
  return chunks;
}

t.test('a late loop holds the streams while other requests are answered, then lets them go', async (t) => {
  const yielding = createBulkYield({ lagMs: 10 });
  t.teardown(() => yielding.close());
  const source = new PassThrough();
  const gated = yielding.gated(source);
  const out = collect(gated);

  source.write('first');
  await sleep(30);
  t.same(out, ['first'], 'an on-time loop passes chunks straight on');

  yielding.noteRequest();
  blockLoop(40);
  await sleep(15);
  t.ok(yielding.holding(), 'a probe 30 ms late with a request in the last second holds');
  source.write('second');
  await sleep(20);
  t.same(out, ['first'], 'a held stream passes nothing on');

  const heldSince = performance.now();
  while (out.length < 2 && performance.now() - heldSince < 2_000) await sleep(5);
  t.same(out, ['first', 'second'], 'the held chunk goes on once the loop is on time again');
  t.ok(performance.now() - heldSince >= 40, 'not before the hold (100 ms from the last late probe) ran out');
  t.ok(yielding.heldMs() >= 90, `the hold is counted (${yielding.heldMs().toFixed(0)} ms)`);
  source.end();
  await once(gated, 'end');
});

t.test('a process that only streams never holds', async (t) => {
  const yielding = createBulkYield({ lagMs: 10 });
  t.teardown(() => yielding.close());
  const source = new PassThrough();
  const out = collect(yielding.gated(source));
  await sleep(15);
  blockLoop(40);
  await sleep(15);
  source.write('chunk');
  await sleep(5);
  t.notOk(yielding.holding(), 'no other request: the export goes on at full speed');
  t.same(out, ['chunk']);
  t.equal(yielding.heldMs(), 0);
  source.destroy();
});

t.test('lagMs 0 never holds and adds no stage', async (t) => {
  const yielding = createBulkYield({ lagMs: 0 });
  t.teardown(() => yielding.close());
  const source = new PassThrough();
  t.equal(yielding.gated(source), source, 'the stream itself');
  yielding.noteRequest();
  blockLoop(40);
  await sleep(15);
  t.notOk(yielding.holding());
  source.destroy();
});

t.test('a held stream that is destroyed leaves nothing waiting, and its source is destroyed with it', async (t) => {
  const yielding = createBulkYield({ lagMs: 10 });
  t.teardown(() => yielding.close());
  const source = new PassThrough();
  const gated = yielding.gated(source);
  collect(gated);
  await sleep(15);
  yielding.noteRequest();
  blockLoop(40);
  await sleep(15);
  t.ok(yielding.holding());
  source.write('held');
  await sleep(5);
  // the source ends with a premature-close error (in the route, streamSlice's pipeline hears it)
  source.on('error', () => {});
  const closed = new Promise((resolve) => source.once('close', resolve));
  gated.destroy();
  await closed;
  t.ok(source.destroyed, 'the COPY side is destroyed with the response side');
  const other = new PassThrough();
  const out = collect(yielding.gated(other));
  other.write('next');
  const start = performance.now();
  while (out.length === 0 && performance.now() - start < 2_000) await sleep(5);
  t.same(out, ['next'], 'a hold ends with the last stream it held: a later stream starts unheld');
  other.destroy();
});

t.test('a loop that stays late holds a stream a second at most, then lets it flow', async (t) => {
  const yielding = createBulkYield({ lagMs: 10 });
  t.teardown(() => yielding.close());
  const source = new PassThrough();
  const out = collect(yielding.gated(source));
  await sleep(15);
  // the pages keep the loop late: 20 ms of work every 15 ms, a request each time
  const busy = setInterval(() => {
    yielding.noteRequest();
    blockLoop(20);
  }, 15);
  t.teardown(() => clearInterval(busy));
  while (!yielding.holding()) await sleep(5);
  const heldAt = performance.now();
  source.write('held');
  while (out.length === 0 && performance.now() - heldAt < 5_000) await sleep(5);
  const waited = performance.now() - heldAt;
  clearInterval(busy);
  t.same(out, ['held'], 'the chunk went on while the loop was still late');
  // a second, and the timers' own lateness on a loaded machine (the test's loop is busy 4/3 of the time)
  t.ok(waited >= 800 && waited < 3_500, `after about the longest hold, a second (${waited.toFixed(0)} ms)`);
  source.destroy();
});
