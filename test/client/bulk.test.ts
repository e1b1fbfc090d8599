// The client's bulk pull over real HTTP (a loopback port): sensorDataBulk() streams a slice of
// the year (gzip on the wire, decoded by fetch), names the next, and the slices in turn hold every
// hourly record of the database once; a stream aborted half-way frees its slot and its database
// connection, and the same query asked again gives the whole slice.
import t from 'tap';
import { ColdtrackClient } from '@coldtrack/client';
import { createExportWorld, databaseHourly, canonicalLine } from './world.js';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

const world = await createExportWorld(t);
const unit = world.unitIds[0]!;
const client = new ColdtrackClient({ baseUrl: world.baseUrl, token: world.token });

async function textOf(body: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(body).text();
}

t.test('slice after slice, every hourly record of a unit once', async (t) => {
  const lines: string[] = [];
  const slices: string[] = [];
  let query: Parameters<ColdtrackClient['sensorDataBulk']>[0] | null = {
    cooling_unit_id: unit,
    start_date: '2025-01-01',
    end_date: '2025-12-31',
    aggregation: 'hourly',
    format: 'ndjson',
    max_records: 5000,
  };
  while (query) {
    const slice = await client.sensorDataBulk(query);
    slices.push(`${slice.start}..${slice.end}`);
    for (const line of (await textOf(slice.body)).split('\n').filter(Boolean)) lines.push(canonicalLine(JSON.parse(line)));
    query = slice.next;
  }
  t.ok(slices.length >= 4, `${slices.length} slices (${slices[0]}, ${slices[1]}, ...)`);
  const expected = await databaseHourly(world.db, unit);
  t.equal(lines.length, expected.count, `${expected.count} records`);
  const checksum = createHash('sha256');
  for (const line of lines) checksum.update(`${line}\n`);
  t.equal(checksum.digest('hex'), expected.checksum, 'the same records and values as the database, in order');
});

t.test('a stream aborted half-way frees its slot and connection; asked again, the slice is whole', async (t) => {
  const query = { start_date: '2025-01-01', end_date: '2025-12-31', format: 'csv', max_records: 5_000_000 } as const;
  const controller = new AbortController();
  const slice = await client.sensorDataBulk(query, { signal: controller.signal });
  const reader = slice.body.getReader();
  const first = await reader.read();
  t.ok(first.value && first.value.length > 0, 'bytes arrive');
  controller.abort();
  await reader.cancel().catch(() => {});
  const pool = world.ctx.app.db;
  for (let waited = 0; pool.totalCount !== pool.idleCount && waited < 5000; waited += 50) await sleep(50);
  t.equal(pool.totalCount - pool.idleCount, 0, 'its connection is back (closed or idle)');
  // the server's backend may still be ending its COPY after the service has let the connection go
  // (a full run on a busy machine saw it once), so the check waits for it, within a bound a COPY
  // left running for good never meets
  const copiesRunning = async () =>
    (
      await world.db.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'COPY%' AND state = 'active'",
      )
    ).rows[0]!.n;
  let copies = await copiesRunning();
  for (let waited = 0; copies > 0 && waited < 15_000; waited += 50) {
    await sleep(50);
    copies = await copiesRunning();
  }
  t.equal(copies, 0, 'no COPY left running on the server');
  const again = await client.sensorDataBulk(query);
  const text = await textOf(again.body);
  const records = text.trimEnd().split('\n').length - 1;
  const { rows: stored } = await world.db.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM sensor_readings WHERE cooling_unit_id = ANY($1) AND recorded_at >= '2025-01-01' AND recorded_at < '2026-01-01'",
    [world.unitIds],
  );
  t.equal(records, stored[0]!.n, `the whole year again: ${records} readings`);
});
