// Benchmark P15: from nothing to a complete local copy of a fleet's hourly history with
// coldtrack-export's engine (exportSensorHistory, by bulk pull over real HTTP on loopback: units
// found, slices read, split into per-unit files, synced, checkpointed), over at least 3 M hourly
// records (172 units x 365 days x 24 hours x 2 types). Beside it, in alternating rounds, the floor:
// COPY of the same rows (the bulk pull's own statement) TO STDOUT through the same compressor the
// service uses for a client that accepts gzip only (as the client does), into nowhere.
// Targets: >= 200,000 records/s, and >= 0.5x the floor's speed on the same bytes (its seconds over
// the export's).
//   node --import tsx bench/sensor-bulk-export.ts [--quick] [--profile postgres|timescale]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import zlib from 'node:zlib';
import { to as copyTo } from 'pg-copy-streams';
import { ColdtrackClient } from '@coldtrack/client';
import { exportSensorHistory } from '@coldtrack/client/export';
import { copyStatement } from '../src/sensors/bulk.js';
import * as script from './kit/sensor-script.js';
import { fixed, median } from './kit/statistics.js';

const UNITS = script.quick ? 40 : 172;
const DAYS = 365;
const ROUNDS = script.quick ? 1 : 3;
const YEAR = { from: '2025-01-01', to: '2025-12-31' };
const RECORDS_TARGET = 200_000;
const FLOOR_TARGET = 0.5;

console.log(`sensor benchmark P15: a fleet's hourly year by coldtrack-export (bulk pull) vs COPY + gzip${script.quick ? ' (quick)' : ''}`);
const P15 = {
  key: 'P15',
  name: `export of an hourly year, >= ${RECORDS_TARGET.toLocaleString('en')} records/s and >= ${FLOOR_TARGET}x COPY + gzip`,
};
const db = await script.createBenchDatabase('bulk_export', 4, [P15]);
console.log(db.note);
try {
  const { company, app, headers } = await script.storeWithApp(db, UNITS, DAYS);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const baseUrl = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const token = headers.authorization.slice('Bearer '.length);
  const root = await mkdtemp(join(tmpdir(), 'coldtrack-bench-bulk-'));
  try {
    // the floor: the bulk pull's statement over the whole year, through gzip level 3, counted and dropped
    const floorStatement = copyStatement({
      unitIds: company.unitIds,
      types: ['TEMPERATURE', 'HUMIDITY'],
      fromMs: Date.parse(`${YEAR.from}T00:00:00Z`),
      toMs: Date.parse('2026-01-01T00:00:00Z'),
      aggregation: 'hourly',
      format: 'csv',
    });
    const floor = async () => {
      const client = await script.untimedClient(db);
      const started = performance.now();
      let raw = 0;
      let compressed = 0;
      try {
        const source = client.query(copyTo(floorStatement));
        source.on('data', (chunk: Buffer) => (raw += chunk.length));
        await pipeline(
          source,
          zlib.createGzip({ level: 3 }),
          new Writable({
            write(chunk: Buffer, _encoding, done) {
              compressed += chunk.length;
              done();
            },
          }),
        );
      } finally {
        await client.end();
      }
      return { seconds: (performance.now() - started) / 1000, raw, compressed };
    };
    const exportOnce = async (round: number) => {
      const outDir = join(root, `export-${round}`);
      const client = new ColdtrackClient({ baseUrl, token });
      const started = performance.now();
      const summary = await exportSensorHistory(client, { baseUrl, ...YEAR, aggregation: 'hourly', units: 'all', format: 'csv', outDir });
      const seconds = (performance.now() - started) / 1000;
      await rm(outDir, { recursive: true, force: true });
      return { seconds, records: summary.records, requests: summary.pages };
    };

    const floors: number[] = [];
    const exports: number[] = [];
    let records = 0;
    let bytes = { raw: 0, compressed: 0 };
    let requests = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // alternating, so a drift of the machine over the run hits both
      const order = round % 2 === 0 ? (['floor', 'export'] as const) : (['export', 'floor'] as const);
      for (const kind of order) {
        if (kind === 'floor') {
          const run = await floor();
          floors.push(run.seconds);
          bytes = { raw: run.raw, compressed: run.compressed };
          console.log(
            `  round ${round + 1} COPY + gzip: ${fixed(run.seconds, 2)} s (${(run.raw / 1e6).toFixed(0)} MB of CSV, ${(run.compressed / 1e6).toFixed(1)} MB gzip)`,
          );
        } else {
          const run = await exportOnce(round);
          exports.push(run.seconds);
          records = run.records;
          requests = run.requests;
          console.log(`  round ${round + 1} export: ${fixed(run.seconds, 2)} s, ${run.records} records, ${run.requests} requests`);
        }
      }
    }
    const exportSeconds = median(exports);
    const floorSeconds = median(floors);
    const perSecond = records / exportSeconds;
    const ratio = floorSeconds / exportSeconds;
    console.log(
      `median of ${ROUNDS}: export ${fixed(exportSeconds, 2)} s (${Math.round(perSecond).toLocaleString('en')} records/s), COPY + gzip ${fixed(floorSeconds, 2)} s`,
    );
    script.report([
      {
        ...P15,
        pass: perSecond >= RECORDS_TARGET && ratio >= FLOOR_TARGET,
        measured: `${Math.round(perSecond).toLocaleString('en')} records/s, ${fixed(ratio, 2)}x COPY + gzip`,
        ratio,
        detail:
          `${records} hourly records of ${UNITS} units in ${requests} requests; median of ${ROUNDS} alternating rounds; ` +
          `the same rows by COPY: ${(bytes.raw / 1e6).toFixed(0)} MB of CSV, ${(bytes.compressed / 1e6).toFixed(1)} MB gzip; ${script.profile} profile`,
      },
    ]);
  } finally {
    await rm(root, { recursive: true, force: true });
    await app.close();
  }
} finally {
  await db.drop();
}
