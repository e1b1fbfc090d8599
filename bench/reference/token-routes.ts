// The API-token management endpoints for employees: list a company's tokens, create one (a raw
// `ctk_` value, its SHA-256 stored in one transaction), with the project's queries.
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type pg from 'pg';
import type { Access, Query } from './access.js';
import { pagination } from './paging.js';
import type { ProjectSql } from './project-sql.js';

/** A token row as the API answers it: timestamps as ISO text or null. */
const record = (row: Record<string, unknown>) => {
  const out: Record<string, unknown> = { ...row };
  for (const field of ['expires_at', 'last_used_at', 'revoked_at', 'created_at']) {
    const value = row[field];
    out[field] = value instanceof Date ? value.toISOString() : null;
  }
  return out;
};

export function registerTokenRoutes(app: FastifyInstance, pool: pg.Pool, sql: ProjectSql, access: Access) {
  app.get('/api/v1/api-tokens', async (request) => {
    const user = await access.employee(request, false);
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
    const user = await access.employee(request, true);
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
}
