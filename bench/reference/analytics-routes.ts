// The four analytics endpoints, doing the project's I/O and nothing more: the page's cells, the
// project's query for them, and the sums done on the event loop (no worker threads): revenue by the
// project's own rollup (workers/rollups/revenue.ts), the others in floats.
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import type { Access, Query } from './access.js';
import { bucketsOf, grid, iso, metaOf, windowOf } from './paging.js';
import { rollupRevenue } from '../../workers/rollups/revenue.js';
import type { ProjectSql } from './project-sql.js';

/** The project's revenue and impact queries answer a row set in parts, a JSON text per unit. */
const rowsOfParts = <Row>(parts: { rows: string }[]) => parts.flatMap((part) => JSON.parse(part.rows) as Row[]);

export function registerAnalyticsRoutes(app: FastifyInstance, pool: pg.Pool, sql: ProjectSql, access: Access) {
  app.get('/api/v1/analytics/utilization', async (request) => {
    const query = request.query as Query;
    const token = await access.apiToken(request, 'utilization');
    const page = grid(query, await access.unitScope(token, query));
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

  app.get('/api/v1/analytics/revenue', async (request) => {
    const query = request.query as Query;
    const token = await access.apiToken(request, 'revenue');
    const page = grid(query, await access.unitScope(token, query));
    const status = query.payment_status ?? 'all';
    const { rows } =
      page.cells.length > 0
        ? await pool.query<{ rows: string }>(sql.revenue, [page.unitIds, page.days, page.starts, status])
        : { rows: [] };
    // the project's own rollup, summed here on the event loop (the project hands big pages to threads)
    const cells = page.cells.map(({ bucket, unitId }) => ({
      cooling_unit_id: unitId,
      period_start: iso(bucket.start),
      period_end: iso(bucket.end),
    }));
    const data = rollupRevenue({ cells, checkOuts: rows.map((part) => part.rows) });
    const meta = page.meta(token.company_id);
    return { data, meta: { ...meta, filters: { ...meta.filters, payment_status: status } } };
  });

  app.get('/api/v1/analytics/impact', async (request) => {
    const query = request.query as Query;
    const token = await access.apiToken(request, 'impact');
    const page = grid(query, await access.unitScope(token, query));
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
      for (const [p, u, , kg] of rowsOfParts<[string, number, number, string]>(crates.rows)) cell(p, u).kg += Number(kg);
      for (const [p, u] of rowsOfParts<[string, number]>(surveys.rows)) cell(p, u).surveys++;
      for (const [p, u] of rowsOfParts<[string, number]>(farmers.rows)) cell(p, u).farmers++;
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
    const token = await access.apiToken(request, 'users');
    const unitIds = await access.unitScope(token, query);
    const w = windowOf(query);
    const all = bucketsOf(w.start, w.end, w.period);
    const buckets = all.slice((w.page - 1) * w.pageSize, w.page * w.pageSize);
    let data: Record<string, unknown>[] = [];
    if (buckets.length > 0) {
      const { rows } = await pool.query(sql.users, [unitIds, buckets.map((b) => iso(b.start)), buckets.map((b) => iso(b.end))]);
      data = rows.map((row, i) => ({ ...row, period_end: iso(buckets[i]!.end) }));
    }
    return { data, meta: metaOf(query, w, all.length, token.company_id) };
  });
}
