// The reference the benchmark compares the project with: the least a Fastify service can do to
// answer the same requests with the same I/O. Per data request: one Redis rate-limit script (the
// project's fixed-window Lua), the project's own SQL (read from sql/queries/*.sql, the text, not
// the code), rows turned into JSON by JSON.stringify; tokens and unit lists cached in process as
// the project caches them. No validation beyond what the queries need, no OpenAPI, no metrics, no
// worker threads (revenue/impact are summed on the event loop), no revocation check, no logging.
// It imports nothing from src/: it is the floor, not a second implementation.
//
// Runs as a node:cluster of WORKERS workers like the project. Env: DATABASE_URL, REDIS_URL,
// JWT_SECRET, PORT, HOST (default 127.0.0.1), WORKERS (default 2).
import cluster from 'node:cluster';
import { createHash, createSecretKey, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import { jwtVerify } from 'jose';
import pg from 'pg';
import { SENSOR_SQL } from './sensor-sql.js';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`reference server: ${name} is required`);
  return value;
};

// ---------------------------------------------------------------------------------------------

/** The project's named queries, as text: `-- name: x` sections of sql/queries/<file>.sql. */
function queries(file: string): Map<string, string> {
  const text = readFileSync(new URL(`../../sql/queries/${file}.sql`, import.meta.url), 'utf8');
  const found = new Map<string, string>();
  for (const chunk of text.split(/^-- name: */m).slice(1)) {
    const [header = '', ...body] = chunk.split('\n');
    found.set(header.trim(), body.join('\n').trim());
  }
  return found;
}

const sqlOf = (map: Map<string, string>, name: string) => {
  const sql = map.get(name);
  if (!sql) throw new Error(`no query ${name}`);
  return sql;
};

const WINDOW_SCRIPT = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return {current, tonumber(ARGV[1])}
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {current, ttl}`;

const LIMITS = { token: 100, read: 600, write: 120 } as const;
const DAY = 86_400_000;
const UNITS_TTL_MS = 10_000;

class Refusal extends Error {
  constructor(readonly status: number, readonly code: string) {
    super(code);
  }
}

interface TokenRow {
  id: string;
  company_id: number;
  scopes: string[];
  expires_at: Date | null;
  revoked: boolean;
  cooling_unit_ids: number[];
}

interface Bucket {
  start: number;
  end: number;
}

const day = (text: string) => Date.UTC(+text.slice(0, 4), +text.slice(5, 7) - 1, +text.slice(8, 10));
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function bucketsOf(start: number, end: number, period: string): Bucket[] {
  const buckets: Bucket[] = [];
  for (let first = start; first <= end; ) {
    const date = new Date(first);
    const next =
      period === 'week'
        ? first + (7 - ((date.getUTCDay() + 6) % 7)) * DAY
        : period === 'month'
          ? Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)
          : first + DAY;
    buckets.push({ start: first, end: Math.min(next - DAY, end) });
    first = next;
  }
  return buckets;
}

function pagination(page: number, pageSize: number, total: number) {
  const pages = Math.ceil(total / pageSize);
  return { page, page_size: pageSize, total_count: total, total_pages: pages, has_next: page < pages, has_previous: page > 1 };
}

async function serveWorker() {
  const pool = new pg.Pool({
    connectionString: env('DATABASE_URL'),
    max: 10,
    statement_timeout: 30_000,
    options: '-c TimeZone=UTC -c jit=off',
  });
  pool.on('error', () => {}); // idle clients cut when the benchmark drops its database
  const redis = new Redis(env('REDIS_URL'), { enableOfflineQueue: true, maxRetriesPerRequest: 1 });
  redis.defineCommand('window', { numberOfKeys: 1, lua: WINDOW_SCRIPT });
  const jwtKey = createSecretKey(Buffer.from(env('JWT_SECRET'), 'utf8'));

  const tokenSql = queries('api-tokens');
  const sql = {
    tokenForAuth: sqlOf(tokenSql, 'tokenForAuth'),
    listTokens: sqlOf(tokenSql, 'listTokens'),
    countTokens: sqlOf(tokenSql, 'countTokens'),
    insertToken: sqlOf(tokenSql, 'insertToken'),
    tokenById: sqlOf(tokenSql, 'tokenById'),
    userForAuth: sqlOf(queries('users'), 'userForAuth'),
    liveUnits: sqlOf(queries('analytics'), 'liveUnitsOfCompany'),
    utilization: sqlOf(queries('utilization'), 'utilization'),
    revenue: sqlOf(queries('revenue'), 'revenueCheckOuts'),
    users: sqlOf(queries('users-analytics'), 'usersByPeriod'),
    ...(() => {
      const impact = queries('impact');
      return {
        impactCompany: sqlOf(impact, 'impactCompany'),
        impactCrates: sqlOf(impact, 'impactCrates'),
        impactSurveys: sqlOf(impact, 'impactSurveys'),
        impactFarmers: sqlOf(impact, 'impactFarmers'),
      };
    })(),
  };

  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();

  async function limit(key: string, max: number) {
    const [current] = (await (redis as unknown as { window(key: string, ms: number): Promise<[number, number]> }).window(
      `coldtrack-bench-reference:rl:${key}`,
      60_000,
    )) as [number, number];
    if (current > max) throw new Refusal(429, 'rate_limited');
  }

  // warm tokens cost no query, as in the project
  const tokens = new Map<string, TokenRow | null>();
  async function apiToken(request: FastifyRequest, scope: string): Promise<TokenRow> {
    const raw = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!raw) throw new Refusal(401, 'unauthorized');
    const hash = createHash('sha256').update(raw).digest();
    const key = hash.toString('base64');
    let token = tokens.get(key);
    if (token === undefined) {
      token = (await pool.query<TokenRow>(sql.tokenForAuth, [hash])).rows[0] ?? null;
      tokens.set(key, token);
    }
    if (!token || token.revoked || (token.expires_at && token.expires_at.getTime() <= Date.now())) throw new Refusal(401, 'unauthorized');
    await limit(`token:${token.id}`, LIMITS.token);
    if (!token.scopes.includes(scope)) throw new Refusal(403, 'insufficient_scope');
    return token;
  }

  const unitsByCompany = new Map<number, { at: number; units: { id: number; location_id: number }[] }>();
  async function unitScope(token: TokenRow, query: Record<string, string | undefined>): Promise<number[]> {
    let entry = unitsByCompany.get(token.company_id);
    if (!entry || Date.now() - entry.at > UNITS_TTL_MS) {
      entry = { at: Date.now(), units: (await pool.query<{ id: number; location_id: number }>(sql.liveUnits, [token.company_id])).rows };
      unitsByCompany.set(token.company_id, entry);
    }
    let units = entry.units;
    if (token.cooling_unit_ids.length > 0) units = units.filter((unit) => token.cooling_unit_ids.includes(unit.id));
    if (query.cooling_unit_id) units = units.filter((unit) => unit.id === Number(query.cooling_unit_id));
    if (query.location_id) units = units.filter((unit) => unit.location_id === Number(query.location_id));
    if ((query.cooling_unit_id || query.location_id) && units.length === 0) throw new Refusal(404, 'not_found');
    return units.map((unit) => unit.id);
  }

  function windowOf(query: Record<string, string | undefined>) {
    const today = Math.floor(Date.now() / DAY) * DAY;
    const end = query.end_date ? day(query.end_date) : today;
    const start = query.start_date ? day(query.start_date) : end - 29 * DAY;
    return { start, end, period: query.period ?? 'day', page: Number(query.page ?? 1), pageSize: Number(query.page_size ?? 100) };
  }

  /** the page's (bucket x unit) cells, as the project pages them */
  function grid(query: Record<string, string | undefined>, unitIds: number[]) {
    const w = windowOf(query);
    const all = bucketsOf(w.start, w.end, w.period);
    const total = all.length * unitIds.length;
    const cells: { bucket: Bucket; unitId: number }[] = [];
    for (let i = (w.page - 1) * w.pageSize; i < Math.min(total, w.page * w.pageSize); i++) {
      cells.push({ bucket: all[Math.floor(i / unitIds.length)]!, unitId: unitIds[i % unitIds.length]! });
    }
    const buckets = [...new Set(cells.map((cell) => cell.bucket))];
    const days: string[] = [];
    const starts: string[] = [];
    const ends: string[] = [];
    for (const bucket of buckets) {
      for (let d = bucket.start; d <= bucket.end; d += DAY) {
        days.push(iso(d));
        starts.push(iso(bucket.start));
        ends.push(iso(bucket.end));
      }
    }
    return {
      w,
      cells,
      buckets,
      unitIds: [...new Set(cells.map((cell) => cell.unitId))].sort((a, b) => a - b),
      days,
      starts,
      ends,
      meta: (companyId: number) => ({
        company_id: companyId,
        filters: { start_date: iso(w.start), end_date: iso(w.end), period: w.period, cooling_unit_id: query.cooling_unit_id ? Number(query.cooling_unit_id) : null, location_id: query.location_id ? Number(query.location_id) : null },
        pagination: pagination(w.page, w.pageSize, total),
      }),
    };
  }

  const app = Fastify({ logger: false, bodyLimit: 64 * 1024 });
  app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) => {
    if (error instanceof Refusal) return reply.code(error.status).send({ error: { code: error.code, message: error.code } });
    return reply.code(error.statusCode ?? 500).send({ error: { code: 'internal_error', message: String(error.message) } });
  });

  type Query = Record<string, string | undefined>;

  app.get('/readyz', async () => {
    await pool.query('SELECT 1');
    return { status: 'ready' };
  });

  // this worker's event-loop delay since the last reset (the benchmark reads every worker)
  app.get('/__loop', async (request) => {
    const figures = { pid: process.pid, p99Ms: loop.percentile(99) / 1e6, maxMs: loop.max / 1e6 };
    if ((request.query as Query).reset) loop.reset();
    return figures;
  });

  app.get('/api/v1/analytics/utilization', async (request) => {
    const query = request.query as Query;
    const token = await apiToken(request, 'utilization');
    const page = grid(query, await unitScope(token, query));
    const rows = new Map<string, Record<string, unknown>>();
    if (page.cells.length > 0) {
      const found = await pool.query(sql.utilization, [
        page.unitIds,
        page.buckets.map((b) => iso(b.start)),
        page.buckets.map((b) => iso(b.end)),
        new Date(),
      ]);
      for (const row of found.rows) rows.set(`${row.period_start}/${row.cooling_unit_id}`, row);
    }
    const data = page.cells.map(({ bucket, unitId }) => ({ ...rows.get(`${iso(bucket.start)}/${unitId}`), period_end: iso(bucket.end) }));
    return { data, meta: page.meta(token.company_id) };
  });

  // the project's record, field for field (same response bytes), summed naively in floats
  interface CurrencyEntry { fees: number; discounts: number; paid: number; pending: number; paidCount: number; pendingCount: number }
  const round2 = (value: number) => Math.round(value * 100) / 100;
  app.get('/api/v1/analytics/revenue', async (request) => {
    const query = request.query as Query;
    const token = await apiToken(request, 'revenue');
    const page = grid(query, await unitScope(token, query));
    const status = query.payment_status ?? 'all';
    const totals = new Map<string, { currencies: Map<string, CurrencyEntry>; methods: Map<string, { method: string | null; currency: string; total: number; count: number }> }>();
    if (page.cells.length > 0) {
      const { rows } = await pool.query<{ rows: string }>(sql.revenue, [page.unitIds, page.days, page.starts, status]);
      const checkOuts = JSON.parse(rows[0]!.rows) as [string, number, string, string, string, boolean, string | null][];
      for (const [periodStart, unitId, currency, feesText, discountText, paid, method] of checkOuts) {
        const cell = `${periodStart}/${unitId}`;
        let sums = totals.get(cell);
        if (!sums) totals.set(cell, (sums = { currencies: new Map(), methods: new Map() }));
        let entry = sums.currencies.get(currency);
        if (!entry) sums.currencies.set(currency, (entry = { fees: 0, discounts: 0, paid: 0, pending: 0, paidCount: 0, pendingCount: 0 }));
        const fees = Number(feesText);
        const discount = Number(discountText);
        entry.fees += fees;
        entry.discounts += discount;
        if (!paid) {
          entry.pending += fees - discount;
          entry.pendingCount++;
          continue;
        }
        entry.paid += fees - discount;
        entry.paidCount++;
        const methodKey = `${method ?? ''}/${currency}`;
        let byMethod = sums.methods.get(methodKey);
        if (!byMethod) sums.methods.set(methodKey, (byMethod = { method, currency, total: 0, count: 0 }));
        byMethod.total += fees - discount;
        byMethod.count++;
      }
    }
    const data = page.cells.map(({ bucket, unitId }) => {
      const sums = totals.get(`${iso(bucket.start)}/${unitId}`);
      const currencies = sums ? [...sums.currencies].sort(([a], [b]) => (a < b ? -1 : 1)) : [];
      const methods = sums ? [...sums.methods.values()].sort((a, b) => (a.method ?? '~').localeCompare(b.method ?? '~') || a.currency.localeCompare(b.currency)) : [];
      return {
        cooling_unit_id: unitId,
        period_start: iso(bucket.start),
        period_end: iso(bucket.end),
        check_outs: currencies.reduce((count, [, entry]) => count + entry.paidCount + entry.pendingCount, 0),
        currency_totals: currencies.map(([currency, entry]) => ({
          currency,
          total_revenue: round2(entry.fees - entry.discounts),
          paid_revenue: round2(entry.paid),
          pending_revenue: round2(entry.pending),
          cooling_fees: round2(entry.fees),
          discounts: round2(entry.discounts),
          check_outs: entry.paidCount + entry.pendingCount,
          paid_check_outs: entry.paidCount,
          pending_check_outs: entry.pendingCount,
        })),
        payment_methods: methods.map((m) => ({ payment_method: m.method, currency: m.currency, total_revenue: round2(m.total), check_outs: m.count })),
      };
    });
    const meta = page.meta(token.company_id);
    return { data, meta: { ...meta, filters: { ...meta.filters, payment_status: status } } };
  });

  app.get('/api/v1/analytics/impact', async (request) => {
    const query = request.query as Query;
    const token = await apiToken(request, 'impact');
    const page = grid(query, await unitScope(token, query));
    const figures = new Map<string, { kg: number; surveys: number; farmers: number }>();
    const cell = (periodStart: string, unitId: number) => {
      const key = `${periodStart}/${unitId}`;
      const entry = figures.get(key) ?? { kg: 0, surveys: 0, farmers: 0 };
      figures.set(key, entry);
      return entry;
    };
    if (page.cells.length > 0) {
      const params = [page.unitIds, page.days, page.starts];
      const [, crates, surveys, farmers] = await Promise.all([
        pool.query(sql.impactCompany, [token.company_id]),
        pool.query<{ rows: string }>(sql.impactCrates, params),
        pool.query<{ rows: string }>(sql.impactSurveys, params),
        pool.query<{ rows: string }>(sql.impactFarmers, [...params, page.ends]),
      ]);
      for (const [p, u, , kg] of JSON.parse(crates.rows[0]!.rows) as [string, number, number, string][]) cell(p, u).kg += Number(kg);
      for (const [p, u] of JSON.parse(surveys.rows[0]!.rows) as [string, number][]) cell(p, u).surveys++;
      for (const [p, u] of JSON.parse(farmers.rows[0]!.rows) as [string, number][]) cell(p, u).farmers++;
    }
    const data = page.cells.map(({ bucket, unitId }) => {
      const entry = figures.get(`${iso(bucket.start)}/${unitId}`);
      return {
        cooling_unit_id: unitId,
        period_start: iso(bucket.start),
        period_end: iso(bucket.end),
        kg_checked_in: Math.round((entry?.kg ?? 0) * 100) / 100,
        market_surveys: entry?.surveys ?? 0,
        farmers_served: entry?.farmers ?? 0,
      };
    });
    return { data, meta: page.meta(token.company_id) };
  });

  app.get('/api/v1/analytics/users', async (request) => {
    const query = request.query as Query;
    const token = await apiToken(request, 'users');
    const unitIds = await unitScope(token, query);
    const w = windowOf(query);
    const all = bucketsOf(w.start, w.end, w.period);
    const buckets = all.slice((w.page - 1) * w.pageSize, w.page * w.pageSize);
    let data: Record<string, unknown>[] = [];
    if (buckets.length > 0) {
      const { rows } = await pool.query(sql.users, [unitIds, buckets.map((b) => iso(b.start)), buckets.map((b) => iso(b.end))]);
      data = rows.map((row, i) => ({ ...row, period_end: iso(buckets[i]!.end) }));
    }
    return {
      data,
      meta: {
        company_id: token.company_id,
        filters: { start_date: iso(w.start), end_date: iso(w.end), period: w.period, cooling_unit_id: query.cooling_unit_id ? Number(query.cooling_unit_id) : null, location_id: query.location_id ? Number(query.location_id) : null },
        pagination: pagination(w.page, w.pageSize, all.length),
      },
    };
  });

  // naive on purpose: pg row objects, then JSON.stringify (the P2 reference)
  app.get('/api/v1/sensor-data', async (request) => {
    const query = request.query as Query;
    const token = await apiToken(request, 'sensor_data');
    const unitIds = await unitScope(token, query);
    const w = windowOf(query);
    const kinds = (query.specification_type ?? 'TEMPERATURE,HUMIDITY').split(',');
    const from = new Date(w.start);
    const to = new Date(w.end + DAY);
    const aggregation = query.aggregation === 'hourly' || query.aggregation === 'daily' ? query.aggregation : null;
    const page = aggregation ? SENSOR_SQL[aggregation] : SENSOR_SQL.raw;
    const filters = [unitIds, kinds, from, to];
    const [rows, count] = await Promise.all([
      pool.query(page.rows, [...filters, w.pageSize, (w.page - 1) * w.pageSize]),
      pool.query<{ total: number }>(page.count, filters),
    ]);
    const data = rows.rows.map((row: { timestamp: Date; cooling_unit_id: number; specification_type: string; value: number; sample_count: number; min?: number; max?: number }) => ({
      timestamp: row.timestamp.toISOString(),
      cooling_unit_id: row.cooling_unit_id,
      specification_type: row.specification_type,
      value: row.value,
      sample_count: row.sample_count,
      ...(aggregation ? { min: row.min, max: row.max } : {}),
    }));
    return {
      data,
      meta: {
        company_id: token.company_id,
        filters: { start_date: iso(w.start), end_date: iso(w.end), aggregation },
        pagination: pagination(w.page, w.pageSize, count.rows[0]!.total),
      },
    };
  });

  async function employee(request: FastifyRequest, write: boolean): Promise<{ id: number; company_id: number }> {
    const raw = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!raw) throw new Refusal(401, 'unauthorized');
    let subject: string | undefined;
    try {
      subject = (await jwtVerify(raw, jwtKey, { algorithms: ['HS256'] })).payload.sub;
    } catch {
      throw new Refusal(401, 'unauthorized');
    }
    await limit(`${write ? 'write' : 'read'}:${subject}`, write ? LIMITS.write : LIMITS.read);
    const user = (await pool.query<{ id: number; company_id: number; role: string }>(sql.userForAuth, [Number(subject)])).rows[0];
    if (!user || user.role !== 'REGISTERED_EMPLOYEE') throw new Refusal(403, 'insufficient_scope');
    return user;
  }

  const record = (row: Record<string, unknown>) => {
    const out: Record<string, unknown> = { ...row };
    for (const field of ['expires_at', 'last_used_at', 'revoked_at', 'created_at']) {
      const value = row[field];
      out[field] = value instanceof Date ? value.toISOString() : null;
    }
    return out;
  };

  app.get('/api/v1/api-tokens', async (request) => {
    const user = await employee(request, false);
    const query = request.query as Query;
    const page = Number(query.page ?? 1);
    const pageSize = Number(query.page_size ?? 100);
    const now = new Date();
    const [list, count] = await Promise.all([
      pool.query(sql.listTokens, [user.company_id, null, now, pageSize, (page - 1) * pageSize]),
      pool.query<{ total_count: number }>(sql.countTokens, [user.company_id, null, now]),
    ]);
    return {
      data: list.rows.map(record),
      meta: { company_id: user.company_id, filters: { state: null }, pagination: pagination(page, pageSize, count.rows[0]!.total_count) },
    };
  });

  app.post('/api/v1/api-tokens', async (request, reply: FastifyReply) => {
    const user = await employee(request, true);
    const body = request.body as { name: string; scopes: string[] };
    const raw = `ctk_${randomBytes(32).toString('base64url')}`;
    const client = await pool.connect();
    let id: string;
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ id: string }>(sql.insertToken, [
        user.company_id,
        body.name,
        body.scopes,
        createHash('sha256').update(raw).digest(),
        null,
        new Date(),
        user.id,
      ]);
      id = rows[0]!.id;
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
    const { rows } = await pool.query(sql.tokenById, [user.company_id, id]);
    reply.code(201);
    return { ...record(rows[0]!), token: raw };
  });

  const close = async () => {
    await app.close();
    await pool.end();
    redis.disconnect();
    process.exit(0);
  };
  process.on('SIGTERM', () => void close());
  process.on('SIGINT', () => {}); // the primary decides
  await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(env('PORT')) });
}

// ---------------------------------------------------------------------------------------------

if (cluster.isPrimary) {
  const workers = Number(process.env.WORKERS ?? 2);
  for (let i = 0; i < workers; i++) cluster.fork();
  let stopping = false;
  const stop = () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    setTimeout(() => process.exit(0), 5000).unref();
  };
  cluster.on('exit', (worker, code, signal) => {
    if (!stopping) {
      console.error(`reference worker ${worker.process.pid} died (${signal ?? code}); stopping`);
      stop();
    } else if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
  });
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  await serveWorker();
}
