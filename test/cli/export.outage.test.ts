// PostgreSQL becomes unreachable in the middle of an export (a TCP proxy between this file's
// service and the shared server refuses every connection for a few seconds, then opens again):
// the service answers 503 `unavailable` with Retry-After, the client waits it out (with jitter)
// and retries, and the export completes with every record, none twice.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ColdtrackClient, type ClientEvent } from '@coldtrack/client';
import { exportSensorHistory } from '@coldtrack/client/export';
import { createPool } from '../../src/db/pool.js';
import { proxyInFrontOf } from '../helpers/tcp-proxy.js';
import { createExportWorld, createWorldDatabase, databaseHourly, fileRecords, YEAR } from '../client/world.js';

const direct = await createWorldDatabase(t);
const { proxy, url: viaProxy } = await proxyInFrontOf(t, direct.url);
// the service's own pool, through the proxy; a connection the proxy cuts must not crash the test
const pool = createPool(viaProxy, 4, { onError: () => {} });
t.teardown(() => pool.end().catch(() => {}));
const world = await createExportWorld(t, { database: { name: direct.name, url: viaProxy, pool } });
const outDir = await mkdtemp(join(tmpdir(), 'coldtrack-outage-'));
t.teardown(() => rm(outDir, { recursive: true, force: true }));

t.test('the database is unreachable for 3 s in the middle: 503s are retried, the export completes', async (t) => {
  const events: ClientEvent[] = [];
  const client = new ColdtrackClient({ baseUrl: world.baseUrl, token: world.token, onEvent: (event) => events.push(event) });
  let pages = 0;
  let outage: Promise<void> | null = null;
  const summary = await exportSensorHistory(client, {
    baseUrl: world.baseUrl,
    ...YEAR,
    aggregation: 'hourly',
    units: 'all',
    format: 'csv',
    outDir,
    pageSize: 500,
    // by bulk pull (all units), in slices small enough for the outage to fall between two of them
    sliceRecords: 5000,
    onPageWritten: async () => {
      if (++pages !== 10) return;
      await proxy.refuse();
      outage = new Promise((resolve) => setTimeout(() => void proxy.resume().then(resolve), 3000));
    },
  });
  await outage;
  const unavailable = events.filter((event) => event.type === 'response' && event.status === 503);
  const retries = events.filter(
    (event): event is Extract<ClientEvent, { type: 'retry' }> => event.type === 'retry' && event.status === 503,
  );
  t.ok(unavailable.length >= 1, `${unavailable.length} answers were 503 unavailable`);
  t.equal(retries.length, unavailable.length, 'each was retried');
  t.ok(
    retries.every((retry) => retry.ms >= 5000 && retry.ms < 5000 + 1000 * 2 ** retry.attempt),
    `after Retry-After (5 s) plus jitter: ${retries.map((retry) => Math.round(retry.ms)).join(', ')} ms`,
  );
  t.equal(events.filter((event) => event.type === 'response' && event.status === 429).length, 0, 'no 429');
  t.equal(summary.records, 52_560, 'every record');
  for (const id of world.unitIds) {
    const file = fileRecords(join(outDir, `cooling-unit-${id}.csv`), 'csv');
    t.same({ count: file.count, checksum: file.checksum }, await databaseHourly(world.db, id), `unit ${id}: the database's rows exactly`);
  }
});
