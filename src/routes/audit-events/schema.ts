// A token audit event as GET /api/v1/audit-events shows it (src/audit/repository.ts reads it).
import { z } from 'zod';
import { ACTOR_TYPES, AUDIT_ACTIONS } from '../../audit/events.js';

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

export const auditEvent = z
  .object({
    id: z.number().int(),
    sequence: z.number().int().describe('1, 2, 3... within the company: the order the events committed in'),
    occurred_at: z.string().describe("ISO 8601 UTC: when the action took place, by the service's clock"),
    action: z
      .enum(AUDIT_ACTIONS)
      .describe(
        'token.leak_reported: a leak report (POST /api/v1/token-leaks) named the token; token.revoked_leaked: the reported token was live, so it was revoked',
      ),
    token_id: z.uuid().describe('The token acted on (token.rotated: the token rotated)'),
    related_token_id: z.uuid().nullable().describe('token.rotated: the replacement; otherwise null'),
    actor: z
      .object({
        type: z.enum(ACTOR_TYPES),
        id: z.string().describe("employee: the user id; leak_reporter: the reporter's name for itself; system: the component"),
        name: z.string().nullable().describe("An employee's name as their user record has it now; null for other actors"),
      })
      .describe('Who acted'),
    client_ip: z.string().nullable().describe('The client IP as the service resolves it (TRUST_PROXY); null when unknown'),
    user_agent: z.string().nullable().describe('The User-Agent sent, cut to 512 characters'),
    request_id: z.string().nullable().describe("The X-Request-Id the action's answer carried"),
    details: z
      .record(z.string(), z.unknown())
      .describe(
        'What the action set (token.created: name, scopes, cooling_unit_ids, allowed_ips, expires_at; token.rotated: ' +
          'grace_period_seconds, old_token_expires_at, allowed_ips); never a token or its hash',
      ),
    prev_hash: sha256Hex.nullable().describe("The hash of the company's previous event (hex); null for its first"),
    hash: sha256Hex.describe("SHA-256 over this event's content and prev_hash (hex): keep the latest to anchor the chain"),
  })
  .meta({ id: 'AuditEvent' });
