// The token audit trail's vocabulary and its one write: an event recorded inside the transaction
// of the change it records, so both commit or neither does. The table chains and guards the
// events itself (sql/migrations/010_token-audit-events.sql).
import type pg from 'pg';
import { loadQueries } from '../db/sql.js';

const sql = loadQueries('token-audit', ['insertEvent']);

/**
 * Every action the trail knows; the database's constraint lists the same. The leak ones are
 * recorded by leak reports (src/tokens/leak-reports.ts), the webhook_endpoint ones by src/webhooks/endpoints.ts.
 */
export const AUDIT_ACTIONS = [
  'token.created',
  'token.rotated',
  'token.revoked',
  'token.leak_reported',
  'token.revoked_leaked',
  // a webhook endpoint's changes (src/webhooks/endpoints.ts): token_id holds the endpoint's id
  'webhook_endpoint.created',
  'webhook_endpoint.updated',
  'webhook_endpoint.deleted',
  'webhook_endpoint.secret_rotated',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** An employee (id: the user id), whoever reported a leak (their name for themselves), the service. */
export const ACTOR_TYPES = ['employee', 'leak_reporter', 'system'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

/** Who acted, and from where: the request's side of an event. */
export interface ActionOrigin {
  actor: { type: ActorType; id: string };
  /** as TRUST_PROXY resolves it (request.ip), one spelling per address; null: not an address */
  clientIp: string | null;
  userAgent: string | null;
  requestId: string | null;
}

export interface TokenEvent {
  companyId: number;
  action: AuditAction;
  tokenId: string;
  /** token.rotated: the replacement */
  relatedTokenId?: string | null;
  occurredAt: Date;
  origin: ActionOrigin;
  /** what the action set; never a raw token or its hash */
  details?: Record<string, unknown>;
}

/** Records the event on `client`, in its transaction: call it last, just before the commit. */
export async function recordTokenEvent(client: pg.ClientBase, event: TokenEvent): Promise<void> {
  const { origin } = event;
  await client.query(sql.insertEvent, [
    event.companyId,
    event.occurredAt,
    event.action,
    event.tokenId,
    event.relatedTokenId ?? null,
    origin.actor.type,
    origin.actor.id,
    origin.clientIp,
    origin.userAgent,
    origin.requestId,
    event.details ?? {},
  ]);
}
