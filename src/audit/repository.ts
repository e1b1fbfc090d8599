// Reading a company's token audit trail (GET /api/v1/audit-events). Every call is scoped by
// company id: another company's events are never read.
import type pg from 'pg';
import { loadQueries } from '../db/sql.js';
import type { ActorType, AuditAction } from './events.js';

const sql = loadQueries('token-audit', ['listEvents', 'countEvents']);

export interface AuditEventRecord {
  id: number;
  sequence: number;
  occurred_at: string;
  action: AuditAction;
  token_id: string;
  related_token_id: string | null;
  /** name: an employee's name as their user record has it now; null for other actors */
  actor: { type: ActorType; id: string; name: string | null };
  client_ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  details: Record<string, unknown>;
  /** hex; prev_hash null for the company's first event */
  prev_hash: string | null;
  hash: string;
}

interface EventRow {
  // bigint: pg hands it over as text
  id: string;
  sequence: string;
  occurred_at: Date;
  action: AuditAction;
  token_id: string;
  related_token_id: string | null;
  actor_type: ActorType;
  actor_id: string;
  actor_name: string | null;
  client_ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  details: Record<string, unknown>;
  prev_hash: string | null;
  hash: string;
}

function toRecord(row: EventRow): AuditEventRecord {
  return {
    id: Number(row.id),
    sequence: Number(row.sequence),
    occurred_at: row.occurred_at.toISOString(),
    action: row.action,
    token_id: row.token_id,
    related_token_id: row.related_token_id,
    actor: { type: row.actor_type, id: row.actor_id, name: row.actor_name },
    client_ip: row.client_ip,
    user_agent: row.user_agent,
    request_id: row.request_id,
    details: row.details,
    prev_hash: row.prev_hash,
    hash: row.hash,
  };
}

export interface AuditEventFilters {
  /** events naming this token either way (token_id or related_token_id) */
  tokenId: string | null;
  action: AuditAction | null;
  /** occurred_at >= from */
  from: Date | null;
  /** occurred_at < to */
  to: Date | null;
}

export function createAuditRepository(pool: pg.Pool) {
  return {
    /** A page of the company's events, newest first (the chain read backwards). */
    async listEvents(companyId: number, filters: AuditEventFilters, limit: number, offset: number) {
      const values = [companyId, filters.tokenId, filters.action, filters.from, filters.to];
      const [list, count] = await Promise.all([
        pool.query<EventRow>(sql.listEvents, [...values, limit, offset]),
        pool.query<{ total_count: number }>(sql.countEvents, values),
      ]);
      return { records: list.rows.map(toRecord), totalCount: count.rows[0]!.total_count };
    },
  };
}

export type AuditRepository = ReturnType<typeof createAuditRepository>;
