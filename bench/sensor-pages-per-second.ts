// Benchmark (d), P2: 1,000-record pages a second from GET /api/v1/sensor-data (the real app on a
// port) >= 2x a naive handler on the same database (pg rows, count(*) and LIMIT/OFFSET,
// JSON.stringify, no authentication): same requests, pool size and generator, measured in turn.
//   node --import tsx bench/sensor-pages-per-second.ts [--quick] [--profile postgres|timescale]
import Fastify from 'fastify';
import { closeLoadGenerators, runLoad } from './kit/load.js';
import * as script from './kit/sensor-script.js';
import { fixed } from './kit/statistics.js';

const UNITS = 20;
const DAYS = 60;
const SECONDS = script.quick ? 4 : 10;
const CONNECTIONS = 4;
const ROUNDS = 2;
const TARGET = 2;
const QUERY = 'cooling_unit_id=7&start_date=2025-12-02&end_date=2025-12-31&page_size=1000';
const PAGES = [1, 2, 3, 4, 5];
const P2 = { key: 'P2', name: `1,000-record pages/s vs naive pg + JSON.stringify (target >= ${TARGET}x)` };
await script.run({ label: 'serialize', poolSize: 8, targets: [P2] }, async (db) => {
  const { company, app, headers } = await script.storeWithApp(db, UNITS, DAYS);
  const naive = Fastify({ logger: false });
  naive.get('/naive', async (request) => {
    const query = request.query as Record<string, string>;
    const [page, size] = [Number(query.page ?? 1), Number(query.page_size ?? 100)];
    const end = new Date(Date.parse(`${query.end_date}T00:00:00Z`) + 86_400_000);
    const params = [Number(query.cooling_unit_id), `${query.start_date}T00:00:00Z`, end];
    const filter = 'cooling_unit_id = $1 AND recorded_at >= $2 AND recorded_at < $3';
    const [rows, count] = await Promise.all([
      db.pool.query<{ recorded_at: Date; cooling_unit_id: number; specification_type: string; value: number }>(
        `SELECT recorded_at, cooling_unit_id, specification_type, value FROM sensor_readings WHERE ${filter}
         ORDER BY recorded_at, cooling_unit_id, specification_type LIMIT $4 OFFSET $5`,
        [...params, size, (page - 1) * size],
      ),
      db.pool.query<{ total: number }>(`SELECT count(*)::int AS total FROM sensor_readings WHERE ${filter}`, params),
    ]);
    const total = count.rows[0]!.total;
    const data = rows.rows.map((row) => ({
      timestamp: row.recorded_at.toISOString(),
      cooling_unit_id: row.cooling_unit_id,
      specification_type: row.specification_type,
      value: row.value,
      sample_count: 1,
    }));
    const pagination = { page, page_size: size, total_count: total, total_pages: Math.ceil(total / size) };
    const more = { has_next: page * size < total, has_previous: page > 1 };
    return { data, meta: { company_id: company.companyId, filters: query, pagination: { ...pagination, ...more } } };
  });
  db.atDrop(() => naive.close());
  db.atDrop(closeLoadGenerators);
  const sides = {
    ours: { url: await app.listen({ port: 0, host: '127.0.0.1' }), path: '/api/v1/sensor-data', headers },
    naive: { url: await naive.listen({ port: 0, host: '127.0.0.1' }), path: '/naive', headers: {} },
  };
  const paths = (side: keyof typeof sides) => PAGES.map((page) => `${sides[side].path}?${QUERY}&page=${page}`);
  // the same records either way
  for (const side of ['ours', 'naive'] as const) {
    const answer = await fetch(`${sides[side].url}${paths(side)[1]}`, { headers: sides[side].headers });
    if (((await answer.json()) as { data: unknown[] }).data.length !== 1000) throw new Error('expected full pages');
  }
  const runs = await script.alternate(ROUNDS, ['naive', 'ours'] as const, async (side) => {
    const requests = paths(side).map((path) => ({ method: 'GET' as const, path, headers: sides[side].headers }));
    const run = await runLoad({ url: sides[side].url, connections: CONNECTIONS, duration: SECONDS, requests }, { nice: true });
    if (run.non2xx + run.errors > 0) throw new Error(`${side}: ${run.non2xx} non-2xx, ${run.errors} errors`);
    return run;
  });
  const rate = (side: keyof typeof sides) => runs[side].reduce((sum, r) => sum + r.okPerS, 0) / ROUNDS;
  const [oursRate, naiveRate] = [rate('ours'), rate('naive')];
  const [oursP50, naiveP50] = [runs.ours[0]!.latencyMs.p50, runs.naive[0]!.latencyMs.p50];
  const ratio = oursRate / naiveRate;
  return [
    {
      ...P2,
      pass: ratio >= TARGET,
      measured: `${fixed(ratio, 2)}x (${fixed(oursRate)} vs ${fixed(naiveRate)} pages/s)`,
      ratio,
      detail: `${CONNECTIONS} connections x ${SECONDS} s x ${ROUNDS} runs each, pages 1..5 in turn; p50 ${oursP50} vs ${naiveP50} ms; ${script.profile} profile`,
    },
  ];
});
