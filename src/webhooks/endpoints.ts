// A company's webhook endpoints: registered, changed, removed, their secret rotated, a test event
// sent, deliveries listed and replayed. Every call is scoped by company id (another company's
// endpoint is not found), and every change is recorded in the audit trail in its transaction.
import type pg from 'pg';
import { type ActionOrigin, type AuditAction, recordTokenEvent } from '../audit/events.js';
import { loadQueries } from '../db/sql.js';
import { ApiError, invalidRequest, notFound } from '../http/errors.js';
import type { Clock } from '../time.js';
import { type AllowedNetworks, checkUrlShape, RefusedUrl, resolveChecked } from './address-policy.js';
import { TEST_EVENT_TYPE, type WebhookEventType } from './events.js';
import { newSigningSecret } from './signing.js';

const sql = loadQueries('webhooks', [
  'insertEndpoint',
  'endpointById',
  'listEndpoints',
  'countEndpoints',
  'updateEndpoint',
  'deleteEndpoint',
  'rotateSecret',
  'insertEvent',
  'listDeliveries',
  'replayDelivery',
  'replaySince',
]);
const liveUnits = loadQueries('api-tokens', ['liveUnitsOfCompany']).liveUnitsOfCompany;

/** Endpoints a company may have. */
export const MAX_ENDPOINTS_PER_COMPANY = 20;

interface EndpointRow {
  id: string;
  company_id: number;
  url: string;
  description: string;
  event_types: WebhookEventType[];
  cooling_unit_ids: number[] | null;
  disabled_reason: 'employee' | 'failing' | null;
  disabled_at: Date | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  created_by: number;
  updated_at: Date;
}

export interface WebhookEndpoint {
  id: string;
  company_id: number;
  url: string;
  description: string;
  event_types: WebhookEventType[];
  cooling_unit_ids: number[];
  enabled: boolean;
  disabled_reason: 'employee' | 'failing' | null;
  disabled_at: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  created_by: number;
  updated_at: string;
}

const iso = (date: Date | null) => (date ? date.toISOString() : null);

function toEndpoint(row: EndpointRow, now: Date): WebhookEndpoint {
  return {
    id: row.id,
    company_id: row.company_id,
    url: row.url,
    description: row.description,
    event_types: row.event_types,
    cooling_unit_ids: row.cooling_unit_ids ?? [],
    enabled: row.disabled_at === null,
    disabled_reason: row.disabled_reason,
    disabled_at: iso(row.disabled_at),
    // a grace period that ended is no longer worth showing
    previous_secret_expires_at:
      row.previous_secret_expires_at && row.previous_secret_expires_at > now ? row.previous_secret_expires_at.toISOString() : null,
    created_at: row.created_at.toISOString(),
    created_by: row.created_by,
    updated_at: row.updated_at.toISOString(),
  };
}

/** An entry of an endpoint's delivery log, as the database gives it. */
export interface DeliveryRow {
  id: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  next_attempt_at: Date;
  completed_at: Date | null;
  message_id: string;
  type: string;
  occurred_at: Date;
  last_attempt_at: Date | null;
  /** the last attempt that has ended (migration 018): one under way is not shown */
  last_outcome: 'succeeded' | 'failed' | 'interrupted' | null;
  last_status_code: number | null;
  last_error: string | null;
  last_duration_ms: number | null;
  interrupted_attempts: number;
  total_count: number;
}

export interface EndpointFields {
  url: string;
  description: string;
  event_types: WebhookEventType[];
  cooling_unit_ids: number[];
}

export interface WebhookEndpointsOptions {
  pool: pg.Pool;
  clock: Clock;
  allowedNetworks: AllowedNetworks;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A malformed id names no endpoint: 404, as an unknown one. */
export const isEndpointId = (candidate: string) => UUID.test(candidate);

export function createWebhookEndpoints({ pool, clock, allowedNetworks }: WebhookEndpointsOptions) {
  /** The URL as registered: shaped right and resolving only to addresses webhooks may be sent to. */
  async function checkedUrl(url: string): Promise<string> {
    try {
      const parsed = checkUrlShape(url);
      await resolveChecked(parsed, allowedNetworks);
      return parsed.href;
    } catch (error) {
      if (error instanceof RefusedUrl) throw invalidRequest('url', `url ${error.message}`);
      throw error;
    }
  }

  async function checkedUnits(client: pg.ClientBase, companyId: number, unitIds: number[]): Promise<number[] | null> {
    if (unitIds.length === 0) return null;
    const unique = [...new Set(unitIds)].sort((a, b) => a - b);
    const { rows } = await client.query<{ id: number }>(liveUnits, [companyId, unique]);
    const known = new Set(rows.map((row) => row.id));
    const unknown = unique.filter((id) => !known.has(id));
    if (unknown.length > 0) throw invalidRequest('cooling_unit_ids', `Unknown cooling units: ${unknown.join(', ')}`);
    return unique;
  }

  /** Runs `change` in a transaction that also records the audit event it returns. */
  async function audited<T>(
    companyId: number,
    origin: ActionOrigin,
    change: (
      client: pg.PoolClient,
    ) => Promise<{ result: T; endpointId: string; action: AuditAction; details: Record<string, unknown> } | null>,
  ): Promise<T | null> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const outcome = await change(client);
      if (!outcome) {
        await client.query('ROLLBACK');
        return null;
      }
      await recordTokenEvent(client, {
        companyId,
        action: outcome.action,
        tokenId: outcome.endpointId,
        occurredAt: clock.now(),
        origin,
        details: outcome.details,
      });
      await client.query('COMMIT');
      return outcome.result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async function find(companyId: number, endpointId: string): Promise<WebhookEndpoint | null> {
    if (!isEndpointId(endpointId)) return null;
    const { rows } = await pool.query<EndpointRow>(sql.endpointById, [companyId, endpointId.toLowerCase()]);
    return rows[0] ? toEndpoint(rows[0], clock.now()) : null;
  }

  async function found(companyId: number, endpointId: string): Promise<WebhookEndpoint> {
    const endpoint = await find(companyId, endpointId);
    if (!endpoint) throw notFound('No webhook endpoint with this id');
    return endpoint;
  }

  return {
    find,
    found,

    async list(companyId: number, limit: number, offset: number) {
      const { rows } = await pool.query<EndpointRow & { total_count: number }>(sql.listEndpoints, [companyId, limit, offset]);
      const totalCount =
        rows[0]?.total_count ?? (offset > 0 ? (await pool.query<{ count: number }>(sql.countEndpoints, [companyId])).rows[0]!.count : 0);
      return { records: rows.map((row) => toEndpoint(row, clock.now())), totalCount };
    },

    /** A new endpoint and its signing secret (shown only in this answer). */
    async create(companyId: number, employeeId: number, fields: EndpointFields, origin: ActionOrigin) {
      const url = await checkedUrl(fields.url);
      const secret = newSigningSecret();
      const id = await audited(companyId, origin, async (client) => {
        // one company's creations in turn: the count below cannot be passed by two at once
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1), $2)', ['webhook_endpoints', companyId]);
        const { rows: counted } = await client.query<{ count: number }>(sql.countEndpoints, [companyId]);
        if (counted[0]!.count >= MAX_ENDPOINTS_PER_COMPANY)
          throw new ApiError(409, 'conflict', `A company can have at most ${MAX_ENDPOINTS_PER_COMPANY} webhook endpoints`);
        const units = await checkedUnits(client, companyId, fields.cooling_unit_ids);
        const { rows } = await client.query<{ id: string }>(sql.insertEndpoint, [
          companyId,
          url,
          fields.description,
          fields.event_types,
          units,
          secret,
          clock.now(),
          employeeId,
        ]);
        const endpointId = rows[0]!.id;
        return {
          result: endpointId,
          endpointId,
          action: 'webhook_endpoint.created',
          details: { url, event_types: fields.event_types, cooling_unit_ids: units ?? [], description: fields.description },
        };
      });
      return { ...(await found(companyId, id!)), secret };
    },

    async update(
      companyId: number,
      endpointId: string,
      changes: Partial<EndpointFields> & { enabled?: boolean | undefined },
      origin: ActionOrigin,
    ): Promise<WebhookEndpoint> {
      if (!isEndpointId(endpointId)) throw notFound('No webhook endpoint with this id');
      const url = changes.url === undefined ? null : await checkedUrl(changes.url);
      const updated = await audited(companyId, origin, async (client) => {
        const units = changes.cooling_unit_ids === undefined ? null : await checkedUnits(client, companyId, changes.cooling_unit_ids);
        const { rows } = await client.query<{ id: string }>(sql.updateEndpoint, [
          companyId,
          endpointId.toLowerCase(),
          url,
          changes.description ?? null,
          changes.event_types ?? null,
          units,
          changes.enabled ?? null,
          changes.cooling_unit_ids !== undefined && units === null,
          clock.now(),
        ]);
        if (!rows[0]) return null;
        const details = Object.fromEntries(
          Object.entries({ ...changes, url: url ?? undefined }).filter(([, value]) => value !== undefined),
        );
        return { result: rows[0].id, endpointId: rows[0].id, action: 'webhook_endpoint.updated', details };
      });
      if (!updated) throw notFound('No webhook endpoint with this id');
      return found(companyId, updated);
    },

    async remove(companyId: number, endpointId: string, origin: ActionOrigin): Promise<void> {
      if (!isEndpointId(endpointId)) throw notFound('No webhook endpoint with this id');
      const removed = await audited(companyId, origin, async (client) => {
        const { rows } = await client.query<{ id: string }>(sql.deleteEndpoint, [companyId, endpointId.toLowerCase()]);
        return rows[0] ? { result: rows[0].id, endpointId: rows[0].id, action: 'webhook_endpoint.deleted', details: {} } : null;
      });
      if (!removed) throw notFound('No webhook endpoint with this id');
    },

    /** A new secret; the old one signs on beside it for `graceMs` (0: it stops at once). */
    async rotateSecret(companyId: number, endpointId: string, graceMs: number, origin: ActionOrigin) {
      if (!isEndpointId(endpointId)) throw notFound('No webhook endpoint with this id');
      const secret = newSigningSecret();
      const now = clock.now();
      const rotated = await audited(companyId, origin, async (client) => {
        const { rows } = await client.query<{ id: string }>(sql.rotateSecret, [
          companyId,
          endpointId.toLowerCase(),
          secret,
          new Date(now.getTime() + graceMs),
          now,
        ]);
        return rows[0]
          ? {
              result: rows[0].id,
              endpointId: rows[0].id,
              action: 'webhook_endpoint.secret_rotated',
              details: { grace_period_seconds: graceMs / 1000 },
            }
          : null;
      });
      if (!rotated) throw notFound('No webhook endpoint with this id');
      return { ...(await found(companyId, rotated)), secret };
    },

    /** A webhook.test event for this endpoint alone, whatever it subscribed to; to a disabled endpoint it is sent once it is enabled. */
    async sendTest(companyId: number, endpointId: string, employeeId: number) {
      const endpoint = await found(companyId, endpointId);
      const { rows } = await pool.query<{ id: string; message_id: string }>(sql.insertEvent, [
        companyId,
        TEST_EVENT_TYPE,
        clock.now(),
        { webhook_endpoint: { id: endpoint.id, url: endpoint.url }, requested_by: employeeId },
        endpoint.id,
        endpoint.id,
      ]);
      return { message_id: rows[0]!.message_id };
    },

    async deliveries(companyId: number, endpointId: string, status: string | null, limit: number, offset: number) {
      const endpoint = await found(companyId, endpointId);
      const { rows } = await pool.query<DeliveryRow>(sql.listDeliveries, [companyId, endpoint.id, status, limit, offset]);
      return rows;
    },

    async replayDelivery(companyId: number, endpointId: string, deliveryId: number): Promise<boolean> {
      const endpoint = await found(companyId, endpointId);
      const { rowCount } = await pool.query(sql.replayDelivery, [companyId, endpoint.id, deliveryId, clock.now()]);
      return (rowCount ?? 0) > 0;
    },

    async replaySince(companyId: number, endpointId: string, since: Date): Promise<number> {
      const endpoint = await found(companyId, endpointId);
      const { rowCount } = await pool.query(sql.replaySince, [companyId, endpoint.id, since, clock.now()]);
      return rowCount ?? 0;
    },
  };
}

export type WebhookEndpoints = ReturnType<typeof createWebhookEndpoints>;
