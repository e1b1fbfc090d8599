// Issue targets at scale: a company with 1,000 units and a year of movements, every analytics
// endpoint timed through the real app (fastify.inject, warm token).
//   - P10: every endpoint, a 366-day window, period=day, page_size 100: p50 <= 200 ms;
//   - and no page of the other shapes (1,000 records, months, one unit's year) over a second.
// Builds the company in a throwaway database (set-based SQL), dropped at the end; with
// --database-url it builds into (or reuses) that database instead and leaves it, for EXPLAIN.
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { mintEmployeeJwt } from '../src/auth/jwt.js';
import { loadConfig, loadSensorStorageConfig } from '../src/config.js';
import { migrate } from '../src/db/migrate.js';
import { createPool } from '../src/db/pool.js';
import { buildAnalyticsDataset } from './kit/analytics-dataset.js';
import { saveScriptResult } from './kit/checkout.js';
import { withThrowawayDatabase } from './kit/throwaway-db.js';

const USAGE = `node --import tsx bench/analytics-scale.ts [options]
  --units N          units of the company (default 1000)
  --days N           days of movements and of the window (default 366)
  --runs N           timed requests per case, after one warm-up (default 11); p50 and best reported
  --only a,b         endpoints to time: users, utilization, revenue, impact (default all)
  --rollups MODE     pool (default, as served: heavy pages on rollup threads at nice 10) or
                     inline (on the event loop: what a page costs without the threads)
  --database-url U   build into this (migrated or empty) database, or reuse it when it already
                     holds the data set, and leave it there (for EXPLAIN ANALYZE); default: a
                     throwaway database, dropped at the end
  --help             this text`;

const { values } = parseArgs({
  options: {
    units: { type: 'string', default: '1000' },
    days: { type: 'string', default: '366' },
    runs: { type: 'string', default: '11' },
    only: { type: 'string' },
    rollups: { type: 'string', default: 'pool' },
    'database-url': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const units = Number(values.units);
const days = Number(values.days);
const runs = Number(values.runs);
const only = values.only ? new Set(values.only.split(',')) : null;
const secret = 'bench-secret-bench-secret-bench-secret-000';

/** P10's budget for a page of 100 records at period=day (p50). */
const P10_MS = 200;
/** The budget of every other shape. */
const PAGE_MS = 1000;

async function measure(url: string) {
  await buildAnalyticsDataset(url, units, days);
  // DB_PREPARED_STATEMENTS=off in the environment: the same pages with every query unnamed
  const config = loadConfig({
    DATABASE_URL: url,
    JWT_SECRET: secret,
    LOG_LEVEL: 'warn',
    DB_PREPARED_STATEMENTS: process.env.DB_PREPARED_STATEMENTS,
  });
  const pool = createPool(url, 10, { preparedStatements: config.dbPreparedStatements });
  // the token's 100 requests a minute are not what is measured
  const rollupMode = values.rollups === 'inline' ? 'inline' : 'pool';
  const app = await buildApp({ config, pool, rollupMode, rateLimitOverrides: { analytics_api_token: 1e6 } });
  const jwt = await mintEmployeeJwt({ secret, userId: 1 });
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/api-tokens',
    headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
    payload: { name: 'bench', scopes: ['users', 'utilization', 'revenue', 'impact'] },
  });
  const headers = { authorization: `Bearer ${created.json().token}` };
  const end = new Date().toISOString().slice(0, 10);
  const start = new Date(Date.now() - (days - 1) * 86_400_000).toISOString().slice(0, 10);
  const window = `start_date=${start}&end_date=${end}`;
  // [endpoint, query, budget]: the P10 shapes first (the first page and one deep in the window)
  const cases: [string, string, number][] = [
    ['users', 'period=day&page_size=100&page=1', P10_MS],
    ['users', 'period=day&page_size=100&page=3', P10_MS],
    ['utilization', 'period=day&page_size=100&page=1', P10_MS],
    ['utilization', 'period=day&page_size=100&page=1830', P10_MS],
    ['revenue', 'period=day&page_size=100&page=1', P10_MS],
    ['revenue', 'period=day&page_size=100&page=1830', P10_MS],
    ['impact', 'period=day&page_size=100&page=1', P10_MS],
    ['impact', 'period=day&page_size=100&page=1830', P10_MS],
    ['utilization', 'period=day&page_size=1000&page=200', PAGE_MS],
    ['utilization', 'period=month&page_size=1000&page=1', PAGE_MS],
    ['utilization', 'period=day&page_size=366&cooling_unit_id=500', PAGE_MS],
    ['revenue', 'period=day&page_size=1000&page=200', PAGE_MS],
    ['impact', 'period=day&page_size=1000&page=200', PAGE_MS],
    ['impact', 'period=day&page_size=366&cooling_unit_id=500', PAGE_MS],
    ['users', 'period=day&page_size=366&page=1', PAGE_MS],
    ['users', 'period=month&page_size=13&page=1', PAGE_MS],
  ];
  console.log(`endpoint      query                                        status   p50 ms  best ms  records  target (p50 of ${runs})`);
  const measured: {
    endpoint: string;
    query: string;
    status: number;
    p50Ms: number;
    bestMs: number;
    records: number;
    budgetMs: number;
    pass: boolean;
  }[] = [];
  for (const [endpoint, query, budget] of cases) {
    if (only && !only.has(endpoint)) continue;
    const times: number[] = [];
    let status = 0;
    let records = 0;
    for (let i = 0; i <= runs; i++) {
      const t0 = performance.now();
      const response = await app.inject({ method: 'GET', url: `/api/v1/analytics/${endpoint}?${window}&${query}`, headers });
      if (i > 0) times.push(performance.now() - t0); // the first one warms caches and compiled serialisers
      status = response.statusCode;
      records = status === 200 ? response.json().data.length : 0;
    }
    times.sort((a, b) => a - b);
    const p50 = times[Math.floor(times.length / 2)]!;
    const verdict = status === 200 && p50 <= budget ? 'PASS' : 'MISS';
    measured.push({ endpoint, query, status, p50Ms: p50, bestMs: times[0]!, records, budgetMs: budget, pass: verdict === 'PASS' });
    const label = budget === P10_MS ? `P10 <= ${P10_MS} ms` : `<= ${PAGE_MS} ms`;
    console.log(
      `${endpoint.padEnd(13)} ${query.padEnd(44)} ${status}   ${p50.toFixed(0).padStart(6)}   ${times[0]!.toFixed(0).padStart(6)}   ${String(records).padStart(6)}  ${verdict} (${label})`,
    );
  }
  const p10 = measured.filter((entry) => entry.budgetMs === P10_MS);
  console.log(`figures: ${saveScriptResult({ P10: { pass: p10.length > 0 && p10.every((entry) => entry.pass) }, runs, cases: measured })}`);
  await app.close();
  await pool.end();
}

if (values['database-url']) {
  await migrate(values['database-url'], loadSensorStorageConfig());
  await measure(values['database-url']);
} else {
  await withThrowawayDatabase({ label: 'scale', migrate: loadSensorStorageConfig() }, (database) => measure(database.url));
}
