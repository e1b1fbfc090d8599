// Benchmark P15: a fleet's hourly year (172 units, >= 3 M records) copied locally by
// coldtrack-export's engine (bulk pull over loopback HTTP, per-unit files, synced, checkpointed)
// at >= 200,000 records/s and >= 0.5x its floor, alternating with it: COPY of the same rows (the
// bulk pull's own statement) through the gzip the service uses for a gzip-only client, into nowhere.
//   node --import tsx bench/sensor-bulk-export.ts [--quick] [--profile postgres|timescale]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import zlib from 'node:zlib';
import { ColdtrackClient } from '@coldtrack/client';
import { exportSensorHistory } from '@coldtrack/client/export';
import { copyStatement } from '../src/sensors/bulk.js';
import * as script from './kit/sensor-script.js';
import { fixed } from './kit/statistics.js';

const UNITS = script.quick ? 40 : 172;
const DAYS = 365;
const ROUNDS = script.quick ? 1 : 3;
const YEAR = { from: '2025-01-01', to: '2025-12-31' };
const RECORDS_TARGET = 200_000;
const FLOOR_TARGET = 0.5;
const P15 = {
  key: 'P15',
  name: `export of an hourly year, >= ${RECORDS_TARGET.toLocaleString('en')} records/s and >= ${FLOOR_TARGET}x COPY + gzip`,
};
await script.run({ label: 'bulk_export', targets: [P15] }, async (db) => {
  const { company, app, headers } = await script.storeWithApp(db, UNITS, DAYS);
  const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  const token = headers.authorization.slice('Bearer '.length);
  const root = await mkdtemp(join(tmpdir(), 'coldtrack-bench-bulk-'));
  db.atDrop(() => rm(root, { recursive: true, force: true }));
  const floorStatement = copyStatement({
    unitIds: company.unitIds,
    types: ['TEMPERATURE', 'HUMIDITY'],
    fromMs: Date.parse(`${YEAR.from}T00:00:00Z`),
    toMs: Date.parse('2026-01-01T00:00:00Z'),
    aggregation: 'hourly',
    format: 'csv',
  });
  let bytes = { sent: 0, out: 0 };
  let exported = { records: 0, pages: 0 };
  const runs = await script.alternate(ROUNDS, ['floor', 'export'] as const, async (kind, round) => {
    if (kind === 'floor') {
      const client = await script.untimedClient(db);
      const gzip = zlib.createGzip({ level: 3 });
      return script.msOf(async () => (bytes = await script.copyOut(client, floorStatement, gzip))).finally(() => client.end());
    }
    const outDir = join(root, `export-${round}`);
    const client = new ColdtrackClient({ baseUrl, token });
    const options = { baseUrl, ...YEAR, aggregation: 'hourly', units: 'all', format: 'csv', outDir } as const;
    const ms = await script.msOf(async () => (exported = await exportSensorHistory(client, options)));
    await rm(outDir, { recursive: true, force: true });
    return ms;
  });
  const { export: exportMs, floor: floorMs } = script.medians(runs);
  const perSecond = exported.records / (exportMs / 1000);
  const ratio = floorMs / exportMs;
  return [
    {
      ...P15,
      pass: perSecond >= RECORDS_TARGET && ratio >= FLOOR_TARGET,
      measured: `${Math.round(perSecond).toLocaleString('en')} records/s, ${fixed(ratio, 2)}x COPY + gzip`,
      ratio,
      detail:
        `${exported.records} hourly records of ${UNITS} units in ${exported.pages} requests; median of ${ROUNDS} alternating rounds: ` +
        `export ${fixed(exportMs / 1000, 2)} s, COPY + gzip ${fixed(floorMs / 1000, 2)} s; ` +
        `the same rows by COPY: ${(bytes.sent / 1e6).toFixed(0)} MB of CSV, ${(bytes.out / 1e6).toFixed(1)} MB gzip; ${script.profile} profile`,
    },
  ];
});
