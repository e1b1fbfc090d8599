// P10: a company with 1,000 units and a year of movements (kit/analytics-dataset.ts), every analytics
// endpoint's pages timed through the real app (fastify.inject, warm token); figures in bench/results/scripts.jsonl.
//   node --import tsx bench/analytics-scale.ts [--units N] [--days N] [--only users,...] [--rollups pool|inline] [--database-url URL]
// --rollups inline: the heavy pages on the event loop, not the rollup threads. --database-url: build into
// (or reuse) that database and leave it, for EXPLAIN ANALYZE. DB_PREPARED_STATEMENTS=off: every query unnamed.
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { mintEmployeeJwt } from '../src/auth/jwt.js';
import { loadConfig, loadSensorStorageConfig } from '../src/config.js';
import { migrate } from '../src/db/migrate.js';
import { createPool } from '../src/db/pool.js';
import { buildAnalyticsDataset } from './kit/analytics-dataset.js';
import { saveScriptResult } from './kit/checkout.js';
import { median, timed } from './kit/statistics.js';
import { withThrowawayDatabase } from './kit/throwaway-db.js';

const { values } = parseArgs({
  options: {
    units: { type: 'string', default: '1000' },
    days: { type: 'string', default: '366' },
    only: { type: 'string' },
    rollups: { type: 'string', default: 'pool' },
    'database-url': { type: 'string' },
  },
});
const units = Number(values.units);
const days = Number(values.days);
const only = values.only ? new Set(values.only.split(',')) : null;
const secret = 'bench-secret-bench-secret-bench-secret-000';
/** timed requests a case, after one that warms caches and compiled serialisers */
const RUNS = 11;

/** P10: a page of 100 records at period=day, p50 */
const P10_MS = 200;
/** every other shape */
const PAGE_MS = 1000;
// [endpoint, query, budget]: the P10 shapes first (the first page and one deep in the window)
const CASES: [string, string, number][] = [
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

async function measure(url: string) {
  await buildAnalyticsDataset(url, units, days);
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
  const day = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
  const window = `start_date=${day(days - 1)}&end_date=${day(0)}`;
  console.log(`endpoint      query                                        status   p50 ms  best ms  records  target (p50 of ${RUNS})`);
  const cases = [];
  for (const [endpoint, query, budgetMs] of CASES.filter(([endpoint]) => !only || only.has(endpoint))) {
    const times: number[] = [];
    let response;
    for (let i = 0; i <= RUNS; i++) {
      const { ms, result } = await timed(() =>
        app.inject({ method: 'GET', url: `/api/v1/analytics/${endpoint}?${window}&${query}`, headers }),
      );
      if (i > 0) times.push(ms);
      response = result;
    }
    const status = response!.statusCode;
    const records = status === 200 ? (response!.json() as { data: unknown[] }).data.length : 0;
    const [p50Ms, bestMs] = [median(times), Math.min(...times)];
    const pass = status === 200 && p50Ms <= budgetMs;
    cases.push({ endpoint, query, status, p50Ms, bestMs, records, budgetMs, pass });
    const label = budgetMs === P10_MS ? `P10 <= ${P10_MS} ms` : `<= ${PAGE_MS} ms`;
    console.log(
      `${endpoint.padEnd(13)} ${query.padEnd(44)} ${status}   ${p50Ms.toFixed(0).padStart(6)}   ${bestMs.toFixed(0).padStart(6)}   ${String(records).padStart(6)}  ${pass ? 'PASS' : 'MISS'} (${label})`,
    );
  }
  const p10 = cases.filter((entry) => entry.budgetMs === P10_MS);
  console.log(`figures: ${saveScriptResult({ P10: { pass: p10.length > 0 && p10.every((entry) => entry.pass) }, runs: RUNS, cases })}`);
  await app.close();
  await pool.end();
}

if (values['database-url']) {
  await migrate(values['database-url'], loadSensorStorageConfig());
  await measure(values['database-url']);
} else {
  await withThrowawayDatabase({ label: 'scale', migrate: loadSensorStorageConfig() }, (database) => measure(database.url));
}
