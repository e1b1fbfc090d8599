// Shared by the audit-trail tests: the event and page shapes of GET /api/v1/audit-events, and a
// reader of a company's events straight from the table (what the API may not show).
import type pg from 'pg';
import type { World } from '../api-tokens/setup.js';

export const EVENTS = '/api/v1/audit-events';

export interface AuditEventJson {
  id: number;
  sequence: number;
  occurred_at: string;
  action: string;
  token_id: string;
  related_token_id: string | null;
  actor: { type: string; id: string; name: string | null };
  client_ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  details: Record<string, unknown>;
  prev_hash: string | null;
  hash: string;
}

export interface AuditPageJson {
  data: AuditEventJson[];
  meta: {
    company_id: number;
    filters: { token_id: string | null; action: string | null; from: string | null; to: string | null };
    pagination: { page: number; page_size: number; total_count: number; total_pages: number; has_next: boolean; has_previous: boolean };
  };
}

export const AUDIT_EVENT_KEYS = [
  'action',
  'actor',
  'client_ip',
  'details',
  'hash',
  'id',
  'occurred_at',
  'prev_hash',
  'related_token_id',
  'request_id',
  'sequence',
  'token_id',
  'user_agent',
];

/** GET /api/v1/audit-events as `jwt`, failing loudly unless it answers 200. */
export async function listEvents(world: World, jwt: string, query = ''): Promise<AuditPageJson> {
  const response = await world.get(jwt, `${EVENTS}${query}`);
  if (response.statusCode !== 200) throw new Error(`audit-events answered ${response.statusCode}: ${response.body}`);
  return response.json<AuditPageJson>();
}

/** Rows of token_audit_events (all companies, or one), in chain order. */
export async function eventRows(pool: pg.Pool, companyId?: number) {
  const { rows } = await pool.query<{
    id: string;
    company_id: number;
    sequence: string;
    action: string;
    token_id: string;
    related_token_id: string | null;
    actor_type: string;
    actor_id: string;
    client_ip: string | null;
  }>(
    `SELECT id, company_id, sequence, action, token_id, related_token_id, actor_type, actor_id, host(client_ip) AS client_ip
     FROM token_audit_events WHERE $1::int IS NULL OR company_id = $1 ORDER BY company_id, sequence`,
    [companyId ?? null],
  );
  return rows;
}

/** How many events the table holds (all companies). */
export async function eventCount(pool: pg.Pool): Promise<number> {
  return (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM token_audit_events')).rows[0]!.n;
}
