// Benchmark P11 (docs/benchmarks.md): bytes on the wire of a 1,000-record sensor page and revenue
// page (gzip and brotli against identity, >= 5x fewer; other zlib levels shown), their req/s
// (>= 0.8x identity, on loopback so only the CPU of compressing shows; the server's CPU a request
// beside, which unlike req/s does not move with the machine's load), and the export command's
// throughput as a fraction of the rate limit's bound (>= 0.9, no 429: the cycle from the first
// request of one window to the first of the next). A lifted limit shows the bound is what binds.
//   node --import tsx bench/compression.ts [--quick]
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import zlib from 'node:zlib';
import { type ClientEvent, ColdtrackClient } from '@coldtrack/client';
import { exportSensorHistory } from '@coldtrack/client/export';
import { BROTLI_QUALITY, GZIP_LEVEL } from '../src/plugins/compression.js';
import { createPool } from '../src/db/pool.js';
import { buildDataset } from './kit/dataset.js';
import { closeLoadGenerators, runLoad } from './kit/load.js';
import { createThrowawayDatabase } from './kit/throwaway-db.js';
import { alternate, buildBenchApp, loadReadings, medians, quick, report } from './kit/sensor-script.js';
import { fixed, median } from './kit/statistics.js';

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
const EXPORT_UNITS = [1, 2, 3, 4, 5];
// 125 days x 96 instants x 2 types = 24,000 readings a unit: exactly 24 full pages
const EXPORT_WINDOW = { from: '2025-08-29', to: '2025-12-31' };

const PAGES = {
  sensor: '/api/v1/sensor-data?cooling_unit_id=1&start_date=2025-12-01&end_date=2025-12-31&page_size=1000',
  revenue: '/api/v1/analytics/revenue?start_date=2025-10-03&end_date=2025-11-21&page_size=1000',
} as const;
type PageName = keyof typeof PAGES;
const PAGE_NAMES = Object.keys(PAGES) as PageName[];
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
  const readings = await loadReadings(dataset.pool, EXPORT_UNITS.length, 125, new Date('2026-01-01T00:00:00Z'));
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

  // 1. bytes on the wire --------------------------------------------------------------------------
  const fetchRaw = (path: string, encoding: Encoding) =>
    new Promise<{ status: number; encoding: string | undefined; body: Buffer }>((resolve, reject) => {
      http
        .get(`${lifted}${path}`, { headers: { authorization: `Bearer ${pageToken}`, 'accept-encoding': encoding } }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode!, encoding: response.headers['content-encoding'], body: Buffer.concat(chunks) }),
          );
        })
        .on('error', reject);
    });
  const wire = {} as Record<PageName, Record<Encoding, number>>;
  const bodies = {} as Record<PageName, Buffer>;
  console.log('\nbytes on the wire (one page each)');
  for (const name of PAGE_NAMES) {
    wire[name] = { identity: 0, gzip: 0, br: 0 };
    for (const encoding of ENCODINGS) {
      const answer = await fetchRaw(PAGES[name], encoding);
      if (answer.status !== 200) throw new Error(`${name} ${encoding}: ${answer.status} ${answer.body.toString().slice(0, 200)}`);
      if ((answer.encoding ?? 'identity') !== encoding) throw new Error(`${name}: asked for ${encoding}, got ${answer.encoding}`);
      wire[name][encoding] = answer.body.length;
      if (encoding === 'identity') bodies[name] = answer.body;
    }
    const records = (JSON.parse(bodies[name].toString()) as { data: unknown[] }).data.length;
    const w = wire[name];
    console.log(
      `  ${name.padEnd(8)} ${records} records: identity ${w.identity} B, gzip ${w.gzip} B (${fixed(w.identity / w.gzip)}x), br ${w.br} B (${fixed(w.identity / w.br)}x)`,
    );
  }
  console.log(
    `  other levels on the same bodies (bytes, CPU ms a page; the service uses gzip ${GZIP_LEVEL} and brotli ${BROTLI_QUALITY}):`,
  );
  const brotli = (quality: number) => (body: Buffer) =>
    zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: quality } });
  const levels: Array<[string, (body: Buffer) => Buffer]> = [
    ...[1, 3, 6, 9].map((level): [string, (body: Buffer) => Buffer] => [`gzip ${level}`, (body) => zlib.gzipSync(body, { level })]),
    ...[1, 3, 4, 6, 11].map((quality): [string, (body: Buffer) => Buffer] => [`br ${quality}`, brotli(quality)]),
  ];
  for (const name of PAGE_NAMES) {
    const cells = levels.map(([label, compress]) => {
      const times: number[] = [];
      let size = 0;
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        size = compress(bodies[name]).length;
        times.push(performance.now() - started);
      }
      return `${label} ${size} B ${fixed(median(times), 2)} ms`;
    });
    console.log(`    ${name.padEnd(8)} ${cells.join(' | ')}`);
  }

  // 2. requests a second ---------------------------------------------------------------------------
  const load = (path: string, encoding: Encoding) => {
    const headers = { authorization: `Bearer ${pageToken}`, 'accept-encoding': encoding };
    const requests = [{ method: 'GET' as const, path, headers }];
    return runLoad({ url: lifted, connections: CONNECTIONS, duration: SECONDS, requests }, { nice: true });
  };
  // medians of req/s, and of the server's CPU per request (this process: event loop, zlib's thread
  // pool, rollup threads), which unlike req/s does not move with what else the machine is doing
  const rate = {} as Record<PageName, Record<Encoding, number>>;
  const cpu = {} as Record<PageName, Record<Encoding, number>>;
  console.log(
    `\nrequests a second (${CONNECTIONS} connections, ${SECONDS} s a run, ${ROUNDS} rounds, encodings alternated; load average ${loadAverage()})`,
  );
  for (const name of PAGE_NAMES) {
    await load(PAGES[name], 'identity'); // warm-up: caches, JIT, rollup threads
    const cpuRuns = { identity: [] as number[], gzip: [] as number[], br: [] as number[] };
    const rates = await alternate(
      ROUNDS,
      ENCODINGS,
      async (encoding) => {
        const before = process.cpuUsage();
        const result = await load(PAGES[name], encoding);
        const used = process.cpuUsage(before);
        if (result.non2xx || result.errors) throw new Error(`${name} ${encoding}: ${result.non2xx} non-2xx, ${result.errors} errors`);
        const cpuMs = (used.user + used.system) / 1000 / result.responses;
        cpuRuns[encoding].push(cpuMs);
        console.log(
          `  ${name.padEnd(8)} ${encoding.padEnd(8)} ${fixed(result.reqPerS)} req/s, p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, ` +
            `${fixed((result.mbPerS * 1e6) / 2 ** 20, 2)} MiB/s, server CPU ${fixed(cpuMs, 2)} ms a request`,
        );
        return result.reqPerS;
      },
      true,
    );
    [rate[name], cpu[name]] = [medians(rates), medians(cpuRuns)];
  }
  for (const name of PAGE_NAMES) {
    console.log(
      `  ${name.padEnd(8)} medians: ${ENCODINGS.map((encoding) => `${encoding} ${fixed(rate[name][encoding])}`).join(', ')} req/s; ` +
        `server CPU ${ENCODINGS.map((encoding) => `${encoding} ${fixed(cpu[name][encoding], 2)}`).join(', ')} ms a request`,
    );
  }

  // 3. export throughput against the bound --------------------------------------------------------
  const limited = await start(true);
  const exportRun = async (baseUrl: string, token: string, label: string) => {
    const sent: { at: number; status: number; records: number }[] = [];
    const events: ClientEvent[] = [];
    const recording = (async (input: URL | string, init?: RequestInit) => {
      const at = performance.now();
      const response = await fetch(input, init);
      const text = await response.clone().text();
      let records = 0;
      try {
        records = (JSON.parse(text) as { data?: unknown[] }).data?.length ?? 0;
      } catch {
        // an error body
      }
      sent.push({ at, status: response.status, records });
      return response;
    }) as typeof fetch;
    const client = new ColdtrackClient({ baseUrl, token, fetch: recording, onEvent: (event) => events.push(event) });
    const started = performance.now();
    const summary = await exportSensorHistory(client, {
      baseUrl,
      ...EXPORT_WINDOW,
      aggregation: 'raw',
      units: EXPORT_UNITS,
      format: 'ndjson',
      outDir: join(scratch, label),
      pageSize: PAGE_SIZE,
      concurrency: 4,
    });
    return { sent, events, summary, seconds: (performance.now() - started) / 1000 };
  };
  console.log(`\nexport: ${EXPORT_UNITS.length} units x 24 pages of ${PAGE_SIZE} raw readings, 4 units at once`);
  const capacity = await exportRun(lifted, liftedToken, 'lifted');
  const capacityPerMinute = (capacity.summary.records / capacity.seconds) * 60;
  console.log(
    `  lifted limit: ${capacity.summary.records} records in ${fixed(capacity.seconds, 2)} s = ${Math.round(capacityPerMinute)} records/min ` +
      `(${fixed(capacityPerMinute / (LIMIT_PER_MINUTE * PAGE_SIZE))}x the bound: the limit is what binds)`,
  );
  console.log(`  real limit (${LIMIT_PER_MINUTE}/min): running, about a minute...`);
  const bound = await exportRun(limited, exportToken, 'limited');
  const refused = bound.sent.filter((request) => request.status === 429).length;
  const waits = bound.events.filter((event) => event.type === 'rate-limit-wait');
  const first = bound.sent[0]!.at;
  // the first request of the next window: the first one sent after the announced wait
  const nextWindow = bound.sent.find((request) => request.at - first > 30_000);
  if (!nextWindow) throw new Error('the export never reached a second window');
  const cycle = bound.sent.filter((request) => request.at < nextWindow.at);
  const cycleRecords = cycle.reduce((sum, request) => sum + request.records, 0);
  const cycleSeconds = (nextWindow.at - first) / 1000;
  const fraction = cycleRecords / ((LIMIT_PER_MINUTE * PAGE_SIZE * cycleSeconds) / 60);
  const burstSeconds = (cycle.at(-1)!.at - first) / 1000;
  console.log(
    `  first window: ${cycle.length} requests (${cycleRecords} records) sent in ${fixed(burstSeconds, 1)} s, then waited; ` +
      `next window's first request ${fixed(cycleSeconds, 2)} s after the first: ${Math.round((cycleRecords / cycleSeconds) * 60)} records/min ` +
      `= ${fixed(fraction, 3)} of the bound (${LIMIT_PER_MINUTE * PAGE_SIZE}/min)`,
  );
  console.log(
    `  whole export: ${bound.summary.records} records, ${bound.sent.length} requests, ${fixed(bound.seconds, 1)} s, ` +
      `${waits.length} rate-limit wait(s), ${refused} answers 429`,
  );

  const minBytes = Math.min(...PAGE_NAMES.flatMap((name) => [wire[name].identity / wire[name].gzip, wire[name].identity / wire[name].br]));
  const rateRatios = PAGE_NAMES.flatMap((name) =>
    (['gzip', 'br'] as const).map((encoding) => [`${name} ${encoding}`, rate[name][encoding] / rate[name].identity] as const),
  );
  const minRate = Math.min(...rateRatios.map(([, ratio]) => ratio));
  console.log('');
  report([
    {
      key: 'P11-bytes',
      name: `1,000-record pages at least ${BYTES_TARGET}x fewer bytes with gzip and brotli`,
      pass: minBytes >= BYTES_TARGET,
      ratio: minBytes,
      measured: PAGE_NAMES.map(
        (name) => `${name} gzip ${fixed(wire[name].identity / wire[name].gzip)}x, br ${fixed(wire[name].identity / wire[name].br)}x`,
      ).join('; '),
      detail: `identity/compressed bytes; sensor ${wire.sensor.identity} B, revenue ${wire.revenue.identity} B uncompressed`,
    },
    {
      key: 'P11-rate',
      name: `req/s compressed at least ${RATE_TARGET}x uncompressed (loopback)`,
      pass: minRate >= RATE_TARGET,
      ratio: minRate,
      measured:
        rateRatios.map(([label, ratio]) => `${label} ${fixed(ratio, 2)}x`).join(', ') +
        ` (server CPU a request: ${PAGE_NAMES.map((name) => `${name} ${ENCODINGS.map((encoding) => fixed(cpu[name][encoding], 2)).join('/')} ms`).join(', ')} identity/gzip/br)`,
      detail: `${CONNECTIONS} connections, ${SECONDS} s x ${ROUNDS} runs per variant, medians; identity sensor ${fixed(rate.sensor.identity)} req/s, revenue ${fixed(rate.revenue.identity)} req/s; load average ${loadAverage()}`,
    },
    {
      key: 'P11-export',
      name: `export at least ${EXPORT_TARGET} of the rate-limit bound with no 429`,
      pass: fraction >= EXPORT_TARGET && refused === 0,
      ratio: fraction,
      measured: `${fixed(fraction, 3)} of ${LIMIT_PER_MINUTE * PAGE_SIZE} records/min over a full window cycle (${fixed(cycleSeconds, 2)} s), ${refused} 429s`,
      detail: `lifted-limit capacity ${Math.round(capacityPerMinute)} records/min`,
    },
  ]);
} finally {
  for (const step of closing.reverse()) await Promise.resolve(step()).catch(() => {});
  await database.drop();
}
process.exit(0);
