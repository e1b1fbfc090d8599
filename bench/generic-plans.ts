// Generic plans of the named statements that take arrays (`= ANY($n)`). After five calls on a
// connection PostgreSQL may keep one generic plan, which sees neither an array's length nor a
// range's bounds. Each statement runs with the parameters the routes send (captured on a company of
// 1,000 units), planned per call and generic in alternation; then a fresh connection runs it 12
// times and pg_prepared_statements says which plan it kept. AT RISK: it keeps a generic plan more
// than 1.5x (and 2 ms) slower.
//   node --import tsx bench/generic-plans.ts [--database-url URL] [--runs N]
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { mintEmployeeJwt } from '../src/auth/jwt.js';
import { loadConfig, loadSensorStorageConfig } from '../src/config.js';
import { DeadlineClient } from '../src/db/deadline-client.js';
import { migrate } from '../src/db/migrate.js';
import { createPool } from '../src/db/pool.js';
import { loadQueries, queriesInFile, queryFiles } from '../src/db/sql.js';
import { statementName } from '../src/db/statements.js';
import { materializeAggregates } from '../src/sensors/store.js';
import { buildAnalyticsDataset } from './kit/analytics-dataset.js';
import { saveScriptResult } from './kit/checkout.js';
import { withThrowawayDatabase } from './kit/throwaway-db.js';
import { loadReadings } from './kit/sensor-script.js';
import { median } from './kit/statistics.js';

const { values: options } = parseArgs({
  options: { 'database-url': { type: 'string' }, runs: { type: 'string', default: '9' } },
  strict: false,
});
const RUNS = Number(options.runs);
const UNITS = 1000;
const DAYS = 366;
/** units with a quarter of sensor readings (15-minute, both types) */
const SENSOR_UNITS = 40;
const SENSOR_DAYS = 90;
const SECRET = 'bench-secret-bench-secret-bench-secret-000';
const RISK_RATIO = 1.5;
const RISK_MS = 2;

interface Call {
  label: string;
  name: string;
  text: string;
  values: unknown[];
}

/** file:name of the sql/queries/ query a statement's text holds (the longest one it contains). */
function queryNameOf(text: string): string {
  let best = { name: '?', length: 0 };
  for (const file of queryFiles()) {
    for (const [name, sql] of queriesInFile(file)) {
      if (sql.length > best.length && text.includes(sql)) best = { name: `${file}:${name}`, length: sql.length };
    }
  }
  return best.name;
}

/** reads given an array parameter (replayed many times: never a write) */
const audited = (text: string, values: unknown[]) =>
  values.some((value) => lengthOf(value) !== null) && !/\b(INSERT|UPDATE|DELETE)\b/i.test(text);
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (value: unknown) => unknown };
/** an array parameter's length: a JavaScript array, or an array literal some routes send ('{1,2}') */
const lengthOf = (value: unknown): number | null => {
  if (Array.isArray(value)) return value.length;
  if (typeof value === 'string' && /^\{.*\}$/s.test(value)) return value === '{}' ? 0 : value.split(',').length;
  return null;
};
/** the lengths of a call's array parameters */
const arrayLengths = (values: unknown[]) =>
  values
    .map(lengthOf)
    .filter((length) => length !== null)
    .map((length) => `[${length}]`)
    .join(' ');

async function sensorData(url: string) {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const { rows } = await pool.query<{ n: string; profile: string }>(
    'SELECT (SELECT count(*) FROM sensor_readings) AS n, (SELECT profile FROM sensor_storage) AS profile',
  );
  const end = new Date(new Date().toISOString().slice(0, 10));
  if (rows[0]!.n === '0') {
    const loaded = await loadReadings(pool, SENSOR_UNITS, SENSOR_DAYS, end);
    await materializeAggregates(pool, rows[0]!.profile === 'timescale' ? 'timescale' : 'postgres', end);
    console.log(`loaded ${loaded.rows} readings of units 1..${SENSOR_UNITS} over ${SENSOR_DAYS} days`);
  }
  await pool.end();
}

/** The named statements the routes run, with their parameters, captured below pg's query(). */
async function captureRouteCalls(url: string): Promise<Call[]> {
  const calls: Call[] = [];
  let label = '';
  const original = DeadlineClient.prototype.query;
  DeadlineClient.prototype.query = function (this: DeadlineClient, config: unknown, values?: unknown, callback?: unknown) {
    const named = config as { name?: string; text?: string; values?: unknown[] };
    const name = named && typeof named === 'object' && named.text ? statementName(named.text) : undefined;
    if (name && named.name === name) {
      const args = (Array.isArray(values) ? values : named.values) ?? [];
      if (audited(named.text!, args)) calls.push({ label, name, text: named.text!, values: args });
    }
    return original.call(this, config, values, callback);
  } as typeof original;
  const config = loadConfig({ DATABASE_URL: url, JWT_SECRET: SECRET, LOG_LEVEL: 'warn' });
  const pool = createPool(url, 4, { preparedStatements: true });
  const app = await buildApp({ config, pool, rollupMode: 'inline', rateLimitOverrides: { analytics_api_token: 1e6 } });
  try {
    const jwt = await mintEmployeeJwt({ secret: SECRET, userId: 1 });
    const create = (payload: object) =>
      app.inject({
        method: 'POST',
        url: '/api/v1/api-tokens',
        headers: { authorization: `Bearer ${jwt}`, 'content-type': 'application/json' },
        payload,
      });
    label = 'create a token for 500 units';
    const restricted = await create({ name: 'units', scopes: ['revenue'], cooling_unit_ids: Array.from({ length: 500 }, (_, i) => i + 1) });
    if (restricted.statusCode !== 201) throw new Error(`token creation: ${restricted.statusCode} ${restricted.body}`);
    const token = (await create({ name: 'plans', scopes: ['users', 'utilization', 'revenue', 'impact', 'sensor_data'] })).json()
      .token as string;
    const headers = { authorization: `Bearer ${token}` };
    const end = new Date().toISOString().slice(0, 10);
    const start = new Date(Date.now() - (DAYS - 1) * 86_400_000).toISOString().slice(0, 10);
    const quarter = new Date(Date.now() - (SENSOR_DAYS - 1) * 86_400_000).toISOString().slice(0, 10);
    const week = new Date(Date.now() - 6 * 86_400_000).toISOString().slice(0, 10);
    const cases: [string, string][] = [
      ['revenue, 100 records of a day', `/api/v1/analytics/revenue?start_date=${start}&end_date=${end}&period=day&page_size=100&page=1`],
      ['revenue, 1,000 records', `/api/v1/analytics/revenue?start_date=${start}&end_date=${end}&period=day&page_size=1000&page=200`],
      [
        'revenue, one unit a year',
        `/api/v1/analytics/revenue?start_date=${start}&end_date=${end}&period=day&page_size=366&cooling_unit_id=500`,
      ],
      ['revenue, months', `/api/v1/analytics/revenue?start_date=${start}&end_date=${end}&period=month&page_size=1000`],
      ['impact, 100 records of a day', `/api/v1/analytics/impact?start_date=${start}&end_date=${end}&period=day&page_size=100&page=1`],
      ['impact, 1,000 records', `/api/v1/analytics/impact?start_date=${start}&end_date=${end}&period=day&page_size=1000&page=200`],
      [
        'impact, one unit a year',
        `/api/v1/analytics/impact?start_date=${start}&end_date=${end}&period=day&page_size=366&cooling_unit_id=500`,
      ],
      ['sensor raw, every unit, a week', `/api/v1/sensor-data?start_date=${week}&end_date=${end}&page_size=1000&page=3`],
      [
        'sensor raw, one unit, a quarter',
        `/api/v1/sensor-data?cooling_unit_id=7&start_date=${quarter}&end_date=${end}&page_size=1000&page=5`,
      ],
      [
        'sensor hourly, every unit, a quarter',
        `/api/v1/sensor-data?aggregation=hourly&start_date=${quarter}&end_date=${end}&page_size=1000&page=40`,
      ],
      [
        'sensor hourly, one unit, a quarter',
        `/api/v1/sensor-data?aggregation=hourly&cooling_unit_id=7&start_date=${quarter}&end_date=${end}&page_size=1000&page=2`,
      ],
      [
        'sensor daily, every unit, a quarter',
        `/api/v1/sensor-data?aggregation=daily&start_date=${quarter}&end_date=${end}&page_size=1000&page=2`,
      ],
    ];
    for (const [what, url] of cases) {
      label = what;
      const response = await app.inject({ method: 'GET', url, headers });
      if (response.statusCode !== 200) throw new Error(`${what}: ${response.statusCode} ${response.body.slice(0, 300)}`);
    }
  } finally {
    DeadlineClient.prototype.query = original;
    await app.close();
    await pool.end();
  }
  // the lookups by key that no route above reaches with many keys, called directly
  const tokens = loadQueries('api-tokens', ['liveUnitsOfCompany']);
  const leaks = loadQueries('token-leaks', ['tokensByHash']);
  const ingest = loadQueries('sensor-ingest', ['knownUnitIds']);
  const direct = (label: string, text: string, values: unknown[]): Call => ({ label, name: `direct_${calls.length}`, text, values });
  calls.push(
    direct('leak report of 100 tokens', leaks.tokensByHash, [Array.from({ length: 100 }, (_, i) => Buffer.alloc(32, i))]),
    direct('ingest batch naming 1,000 units', ingest.knownUnitIds, [Array.from({ length: UNITS }, (_, i) => i + 1)]),
    direct('token for 1,000 units', tokens.liveUnitsOfCompany, [1, Array.from({ length: UNITS }, (_, i) => i + 1)]),
  );
  return calls;
}

/** custom vs generic, alternating; then what auto keeps on a fresh connection. */
async function compare(url: string, call: Call) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const times = { custom: [] as number[], generic: [] as number[] };
  try {
    for (let run = 0; run <= RUNS; run++) {
      for (const mode of ['custom', 'generic'] as const) {
        await client.query(`SET plan_cache_mode = force_${mode}_plan`);
        const started = performance.now();
        await client.query({ name: 'audited', text: call.text, values: call.values });
        if (run > 0) times[mode].push(performance.now() - started); // the first run prepares
      }
    }
    const literals = call.values.map((value) => (value === null ? 'NULL' : client.escapeLiteral(String(prepareValue(value)))));
    await client.query(`PREPARE explained AS ${call.text}`);
    await client.query('SET plan_cache_mode = force_generic_plan');
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (COSTS OFF) EXECUTE explained(${literals.join(', ')})`);
    const genericPlan = rows.map((row) => row['QUERY PLAN']);
    const fresh = new pg.Client({ connectionString: url });
    await fresh.connect();
    try {
      for (let run = 0; run < 12; run++) await fresh.query({ name: 'audited', text: call.text, values: call.values });
      const kept = await fresh.query<{ generic_plans: string; custom_plans: string }>(
        "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'audited'",
      );
      const auto = Number(kept.rows[0]?.generic_plans ?? 0) > 0 ? 'generic' : 'custom';
      return { customMs: median(times.custom), genericMs: median(times.generic), auto, genericPlan };
    } finally {
      await fresh.end();
    }
  } finally {
    await client.end();
  }
}

async function audit(url: string) {
  await buildAnalyticsDataset(url, UNITS, DAYS);
  await sensorData(url);
  const calls = await captureRouteCalls(url);
  // one of each statement per case: the call with the longest arrays
  const chosen = new Map<string, Call>();
  for (const call of calls) {
    const key = `${call.label}\u0000${call.text}`;
    const size = (c: Call) => c.values.reduce<number>((sum, v) => sum + (lengthOf(v) ?? 0), 0);
    if (!chosen.has(key) || size(call) > size(chosen.get(key)!)) chosen.set(key, call);
  }
  const results = [];
  console.log(
    `case                                   statement                            arrays              custom ms  generic ms  ratio  auto keeps  verdict`,
  );
  for (const call of chosen.values()) {
    const statement = queryNameOf(call.text);
    const figures = await compare(url, call);
    const ratio = figures.genericMs / figures.customMs;
    const slower = ratio > RISK_RATIO && figures.genericMs - figures.customMs > RISK_MS;
    const verdict = slower ? (figures.auto === 'generic' ? 'AT RISK' : 'generic slower (auto keeps custom)') : 'ok';
    results.push({ case: call.label, statement, arrays: arrayLengths(call.values), ...figures, ratio, verdict, text: call.text });
    console.log(
      `${call.label.padEnd(38)} ${statement.padEnd(36)} ${arrayLengths(call.values).padEnd(19)} ${figures.customMs.toFixed(2).padStart(9)}  ${figures.genericMs.toFixed(2).padStart(10)}  ${ratio.toFixed(2).padStart(5)}  ${figures.auto.padEnd(10)}  ${verdict}`,
    );
  }
  const atRisk = results.filter((r) => r.verdict === 'AT RISK');
  console.log(
    `\n${atRisk.length} of ${results.length} statement calls at risk (auto keeps a generic plan > ${RISK_RATIO}x and ${RISK_MS} ms slower)`,
  );
  for (const risk of atRisk) console.log(`\n${risk.case}: generic plan\n  ${risk.genericPlan.join('\n  ')}`);
  console.log(`figures: ${saveScriptResult({ atRisk: atRisk.length, runs: RUNS, results })}`);
}

const url = options['database-url'];
if (typeof url === 'string') {
  await migrate(url, loadSensorStorageConfig());
  await audit(url);
} else {
  await withThrowawayDatabase({ label: 'plans', migrate: loadSensorStorageConfig() }, (database) => audit(database.url));
}
