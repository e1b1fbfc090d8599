// Benchmark P11: a 1,000-record sensor page and revenue page at least 5x fewer bytes with gzip and
// brotli than identity (other zlib levels shown), at >= 0.8x identity's req/s on loopback (the
// server's CPU a request beside: unlike req/s it does not move with the machine's load); and the
// export command carrying >= 0.9 of what the rate limit allows, no 429, over the cycle from one
// window's first request to the next's. A lifted limit shows the bound is what binds.
//   node --import tsx bench/compression.ts [--quick]
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import zlib from 'node:zlib';
import { ColdtrackClient } from '@coldtrack/client';
import { exportSensorHistory } from '@coldtrack/client/export';
import { BROTLI_QUALITY, GZIP_LEVEL } from '../src/plugins/compression.js';
import { createPool } from '../src/db/pool.js';
import { buildDataset } from './kit/dataset.js';
import { closeLoadGenerators, runLoad } from './kit/load.js';
import { createThrowawayDatabase } from './kit/throwaway-db.js';
import { alternate, buildBenchApp, END, loadReadings, quick, report } from './kit/sensor-script.js';
import { fixed, median, timed } from './kit/statistics.js';

const SECONDS = quick ? 3 : 5;
const ROUNDS = quick ? 2 : 4;
const CONNECTIONS = 4;
const ENCODINGS = ['identity', 'gzip', 'br'] as const;
type Encoding = (typeof ENCODINGS)[number];
const BYTES_TARGET = 5;
const RATE_TARGET = 0.8;
const EXPORT_TARGET = 0.9;
const LIMIT_PER_MINUTE = 100;
const PAGE_SIZE = 1000;
const BOUND = LIMIT_PER_MINUTE * PAGE_SIZE;
const EXPORT_UNITS = [1, 2, 3, 4, 5];
// 125 days x 96 instants x 2 types = 24,000 readings a unit: exactly 24 full pages
const EXPORT_WINDOW = { from: '2025-08-29', to: '2025-12-31' };
const PAGES = {
  sensor: '/api/v1/sensor-data?cooling_unit_id=1&start_date=2025-12-01&end_date=2025-12-31&page_size=1000',
  revenue: '/api/v1/analytics/revenue?start_date=2025-10-03&end_date=2025-11-21&page_size=1000',
} as const;
type PageName = keyof typeof PAGES;
const PAGE_NAMES = Object.keys(PAGES) as PageName[];
const perEncoding = <T>(value: (encoding: Encoding) => T) =>
  Object.fromEntries(ENCODINGS.map((encoding) => [encoding, value(encoding)])) as Record<Encoding, T>;
const loadAverage = () =>
  loadavg()
    .map((n) => fixed(n, 2))
    .join(' ');

console.log(`P11: compressed responses and export throughput${quick ? ' (quick)' : ''}`);
const database = await createThrowawayDatabase({ label: 'compression' });
const scratch = await mkdtemp(join(tmpdir(), 'coldtrack-p11-'));
// on the way out, last first: the apps before their pools, then the generators and the scratch directory
const closing: (() => unknown)[] = [() => rm(scratch, { recursive: true, force: true }), closeLoadGenerators];
try {
  const dataset = await buildDataset(
    database,
    { heavyUnits: 20, otherUnits: 2, checkInsPerDay: 4, farmersPerCompany: 300, sensorUnits: 0 },
    { alpha: 3, mixed: 0, managers: 0 },
    (line) => console.log(line),
    { sensorStorage: 'postgres', sensorRetentionDays: null },
  );
  closing.push(() => dataset.pool.end());
  const readings = await loadReadings(dataset.pool, EXPORT_UNITS.length, 125, END);
  console.log(`${readings.rows} readings (${EXPORT_UNITS.length} units x 125 days) in ${fixed(readings.seconds)} s`);
  const [pageToken, exportToken, liftedToken] = dataset.credentials.alpha.take(3).map((token) => token.raw) as [string, string, string];
  const pool = createPool(dataset.url, 10);
  closing.push(() => pool.end());
  const start = async (realLimits: boolean) => {
    const app = await buildBenchApp({ url: dataset.url, pool }, undefined, realLimits);
    closing.push(() => app.close());
    return app.listen({ port: 0, host: '127.0.0.1' });
  };
  const lifted = await start(false);
  const headers = (encoding: Encoding) => ({ authorization: `Bearer ${pageToken}`, 'accept-encoding': encoding });

  // 1. bytes on the wire, as sent (fetch would decompress them)
  const fetchRaw = (path: string, encoding: Encoding) =>
    new Promise<Buffer>((resolve, reject) => {
      http
        .get(`${lifted}${path}`, { headers: headers(encoding) }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const body = Buffer.concat(chunks);
            if (response.statusCode !== 200)
              reject(new Error(`${path} ${encoding}: ${response.statusCode} ${body.toString().slice(0, 200)}`));
            else if ((response.headers['content-encoding'] ?? 'identity') !== encoding) reject(new Error(`${path}: no ${encoding} answer`));
            else resolve(body);
          });
        })
        .on('error', reject);
    });
  const wire = {} as Record<PageName, Record<Encoding, Buffer>>;
  for (const name of PAGE_NAMES) {
    wire[name] = {} as Record<Encoding, Buffer>;
    for (const encoding of ENCODINGS) wire[name][encoding] = await fetchRaw(PAGES[name], encoding);
  }
  const bytesRatio = (name: PageName, encoding: 'gzip' | 'br') => wire[name].identity.length / wire[name][encoding].length;
  const levels = [
    ...[1, 3, 6, 9].map((level) => ({ label: `gzip ${level}`, compress: (body: Buffer) => zlib.gzipSync(body, { level }) })),
    ...[1, 3, 4, 6, 11].map((quality) => ({
      label: `br ${quality}`,
      compress: (body: Buffer) => zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: quality } }),
    })),
  ];
  console.log(
    `\nbytes a page, and other levels on the same bodies (bytes, CPU ms; the service uses gzip ${GZIP_LEVEL} and brotli ${BROTLI_QUALITY}):`,
  );
  for (const name of PAGE_NAMES) {
    const body = wire[name].identity;
    const cells = levels.map(({ label, compress }) => {
      const times: number[] = [];
      let size = 0;
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        size = compress(body).length;
        times.push(performance.now() - started);
      }
      return `${label} ${size} B ${fixed(median(times), 2)} ms`;
    });
    console.log(`  ${name.padEnd(8)} identity ${body.length} B | ${cells.join(' | ')}`);
  }

  // 2. requests a second: medians of req/s, and of the server's CPU a request (this process: event
  // loop, zlib's thread pool, rollup threads)
  const load = (path: string, encoding: Encoding) =>
    runLoad(
      { url: lifted, connections: CONNECTIONS, duration: SECONDS, requests: [{ method: 'GET', path, headers: headers(encoding) }] },
      { nice: true },
    );
  const rate = {} as Record<PageName, Record<Encoding, number>>;
  const cpu = {} as Record<PageName, Record<Encoding, number>>;
  console.log(`\nrequests a second (${CONNECTIONS} connections, ${SECONDS} s a run, ${ROUNDS} rounds, encodings alternated):`);
  for (const name of PAGE_NAMES) {
    await load(PAGES[name], 'identity'); // warm-up: caches, JIT, rollup threads
    const runs = await alternate(
      ROUNDS,
      ENCODINGS,
      async (encoding) => {
        const before = process.cpuUsage();
        const result = await load(PAGES[name], encoding);
        const used = process.cpuUsage(before);
        if (result.non2xx || result.errors) throw new Error(`${name} ${encoding}: ${result.non2xx} non-2xx, ${result.errors} errors`);
        return { reqPerS: result.reqPerS, cpuMs: (used.user + used.system) / 1000 / result.responses };
      },
      true,
    );
    rate[name] = perEncoding((encoding) => median(runs[encoding].map((run) => run.reqPerS)));
    cpu[name] = perEncoding((encoding) => median(runs[encoding].map((run) => run.cpuMs)));
    console.log(
      `  ${name.padEnd(8)} medians: ${ENCODINGS.map((encoding) => `${encoding} ${fixed(rate[name][encoding])}`).join(', ')} req/s; ` +
        `server CPU ${ENCODINGS.map((encoding) => `${encoding} ${fixed(cpu[name][encoding], 2)}`).join(', ')} ms a request`,
    );
  }

  // 3. export throughput against the bound
  const limited = await start(true);
  const exportRun = async (baseUrl: string, token: string, label: string) => {
    const sent: { at: number; status: number; records: number }[] = [];
    const recording = (async (input: URL | string, init?: RequestInit) => {
      const at = performance.now();
      const response = await fetch(input, init);
      let records = 0;
      try {
        records = ((await response.clone().json()) as { data?: unknown[] }).data?.length ?? 0;
      } catch {
        // an error body
      }
      sent.push({ at, status: response.status, records });
      return response;
    }) as typeof fetch;
    const client = new ColdtrackClient({ baseUrl, token, fetch: recording });
    const options = { baseUrl, ...EXPORT_WINDOW, aggregation: 'raw', units: EXPORT_UNITS, format: 'ndjson', pageSize: PAGE_SIZE } as const;
    const { ms, result } = await timed(() => exportSensorHistory(client, { ...options, outDir: join(scratch, label), concurrency: 4 }));
    return { sent, records: result.records, seconds: ms / 1000 };
  };
  const capacity = await exportRun(lifted, liftedToken, 'lifted');
  const capacityPerMinute = (capacity.records / capacity.seconds) * 60;
  console.log(`\nexport, lifted limit: ${Math.round(capacityPerMinute)} records/min (${fixed(capacityPerMinute / BOUND)}x the bound)`);
  console.log(`export, real limit (${LIMIT_PER_MINUTE}/min): running, about a minute...`);
  const bound = await exportRun(limited, exportToken, 'limited');
  const refused = bound.sent.filter((request) => request.status === 429).length;
  const first = bound.sent[0]!.at;
  // the first request of the next window: the first one sent after the announced wait
  const nextWindow = bound.sent.find((request) => request.at - first > 30_000);
  if (!nextWindow) throw new Error('the export never reached a second window');
  const cycleRecords = bound.sent.filter((request) => request.at < nextWindow.at).reduce((sum, request) => sum + request.records, 0);
  const cycleSeconds = (nextWindow.at - first) / 1000;
  const fraction = cycleRecords / ((BOUND * cycleSeconds) / 60);

  const minBytes = Math.min(...PAGE_NAMES.flatMap((name) => [bytesRatio(name, 'gzip'), bytesRatio(name, 'br')]));
  const rateRatios = PAGE_NAMES.flatMap((name) =>
    (['gzip', 'br'] as const).map((encoding) => [`${name} ${encoding}`, rate[name][encoding] / rate[name].identity] as const),
  );
  const minRate = Math.min(...rateRatios.map(([, ratio]) => ratio));
  const cpuShown = PAGE_NAMES.map((name) => `${name} ${ENCODINGS.map((encoding) => fixed(cpu[name][encoding], 2)).join('/')} ms`);
  console.log('');
  report([
    {
      key: 'P11-bytes',
      name: `1,000-record pages at least ${BYTES_TARGET}x fewer bytes with gzip and brotli`,
      pass: minBytes >= BYTES_TARGET,
      ratio: minBytes,
      measured: PAGE_NAMES.map((name) => `${name} gzip ${fixed(bytesRatio(name, 'gzip'))}x, br ${fixed(bytesRatio(name, 'br'))}x`).join(
        '; ',
      ),
      detail: `identity/compressed bytes; sensor ${wire.sensor.identity.length} B, revenue ${wire.revenue.identity.length} B uncompressed`,
    },
    {
      key: 'P11-rate',
      name: `req/s compressed at least ${RATE_TARGET}x uncompressed (loopback)`,
      pass: minRate >= RATE_TARGET,
      ratio: minRate,
      measured:
        rateRatios.map(([label, ratio]) => `${label} ${fixed(ratio, 2)}x`).join(', ') +
        ` (server CPU a request: ${cpuShown.join(', ')} identity/gzip/br)`,
      detail: `${CONNECTIONS} connections, ${SECONDS} s x ${ROUNDS} runs per variant, medians; identity sensor ${fixed(rate.sensor.identity)} req/s, revenue ${fixed(rate.revenue.identity)} req/s; load average ${loadAverage()}`,
    },
    {
      key: 'P11-export',
      name: `export at least ${EXPORT_TARGET} of the rate-limit bound with no 429`,
      pass: fraction >= EXPORT_TARGET && refused === 0,
      ratio: fraction,
      measured: `${fixed(fraction, 3)} of ${BOUND} records/min over a full window cycle (${fixed(cycleSeconds, 2)} s), ${refused} 429s`,
      detail: `lifted-limit capacity ${Math.round(capacityPerMinute)} records/min`,
    },
  ]);
} finally {
  for (const step of closing.reverse()) await Promise.resolve(step()).catch(() => {});
  await database.drop();
}
process.exit(0);
