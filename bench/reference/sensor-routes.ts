// The sensor-data endpoint, naive on purpose (the P2 reference): raw rows, or buckets computed
// from them at query time (sensor-sql.ts), as pg row objects, then JSON.stringify.
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import type { Access, Query } from './access.js';
import { DAY, iso, pagination, windowOf } from './paging.js';
import { SENSOR_SQL } from './sensor-sql.js';

export function registerSensorRoutes(app: FastifyInstance, pool: pg.Pool, access: Access) {
  app.get('/api/v1/sensor-data', async (request) => {
    const query = request.query as Query;
    const token = await access.apiToken(request, 'sensor_data');
    const unitIds = await access.unitScope(token, query);
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
    const data = rows.rows.map(
      (row: {
        timestamp: Date;
        cooling_unit_id: number;
        specification_type: string;
        value: number;
        sample_count: number;
        min?: number;
        max?: number;
      }) => ({
        timestamp: row.timestamp.toISOString(),
        cooling_unit_id: row.cooling_unit_id,
        specification_type: row.specification_type,
        value: row.value,
        sample_count: row.sample_count,
        ...(aggregation ? { min: row.min, max: row.max } : {}),
      }),
    );
    return {
      data,
      meta: {
        company_id: token.company_id,
        filters: { start_date: iso(w.start), end_date: iso(w.end), aggregation },
        pagination: pagination(w.page, w.pageSize, count.rows[0]!.total),
      },
    };
  });
}
