// Storage of API tokens for the management surface. Every call is scoped by company id: another
// company's token is indistinguishable from a token that does not exist. Every change records its
// audit event in its own transaction (src/audit/events.ts): both commit, or neither.
import type pg from 'pg';
import { type ActionOrigin, recordTokenEvent } from '../audit/events.js';
import { loadQueries } from '../db/sql.js';
import { inTransaction } from '../db/pool.js';
import { SECOND_MS } from '../time.js';
import type { Scope, TokenState } from './scopes.js';

const sql = loadQueries('api-tokens', [
  'liveUnitsOfCompany',
  'insertToken',
  'insertTokenUnits',
  'tokenById',
  'listTokens',
  'countTokens',
  'lockTokenForRevoke',
  'revokeToken',
  'lockTokenForRotate',
  'tokenToRotate',
  'copyTokenUnits',
  'bringExpiryForward',
]);

export interface ApiTokenRecord {
  id: string;
  name: string;
  company_id: number;
  scopes: Scope[];
  cooling_unit_ids: number[];
  /** canonical CIDR text (src/tokens/allowed-ips.ts); empty: any address */
  allowed_ips: string[];
  expires_at: string | null;
  last_used_at: string | null;
  revoked: boolean;
  revoked_at: string | null;
  created_at: string;
  created_by: number;
  /** the token this one replaced (rotation), and the token that replaced this one */
  rotated_from: string | null;
  replaced_by: string | null;
}

interface TokenRow extends Omit<ApiTokenRecord, 'expires_at' | 'last_used_at' | 'revoked_at' | 'created_at'> {
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

const iso = (date: Date | null) => (date ? date.toISOString() : null);

function toRecord(row: TokenRow): ApiTokenRecord {
  return {
    id: row.id,
    name: row.name,
    company_id: row.company_id,
    scopes: row.scopes,
    cooling_unit_ids: row.cooling_unit_ids,
    allowed_ips: row.allowed_ips,
    expires_at: iso(row.expires_at),
    last_used_at: iso(row.last_used_at),
    revoked: row.revoked,
    revoked_at: iso(row.revoked_at),
    created_at: row.created_at.toISOString(),
    created_by: row.created_by,
    rotated_from: row.rotated_from,
    replaced_by: row.replaced_by,
  };
}

export interface NewToken {
  companyId: number;
  createdBy: number;
  name: string;
  scopes: Scope[];
  coolingUnitIds: number[];
  /** canonical CIDR text (parseAllowedIp); empty: any address */
  allowedIps: string[];
  expiresAt: Date | null;
  tokenHash: Buffer;
  now: Date;
  /** who creates it, from where (the audit event) */
  origin: ActionOrigin;
}

export interface Rotation {
  companyId: number;
  tokenId: string;
  /** the employee rotating: the replacement's created_by */
  rotatedBy: number;
  /** the replacement's secret */
  tokenHash: Buffer;
  now: Date;
  /** the old token stops working at now + grace (or at its own expiry, if sooner) */
  graceMs: number;
  /** who rotates it, from where (the audit event) */
  origin: ActionOrigin;
}

/** Why a token cannot be rotated: only an active token that was never rotated can. */
export type RotationRefusal = 'revoked' | 'expired' | 'already_rotated';

export type RotationOutcome =
  { kind: 'not_found' } | { kind: 'refused'; reason: RotationRefusal } | { kind: 'rotated'; replacementId: string };

const UNIQUE_VIOLATION = '23505';

export function createTokenRepository(pool: pg.Pool) {
  async function findToken(companyId: number, tokenId: string): Promise<ApiTokenRecord | null> {
    const { rows } = await pool.query<TokenRow>(sql.tokenById, [companyId, tokenId]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  return {
    findToken,

    /** Ids among `unitIds` that are live (not deleted) units of the company. */
    async liveUnitIds(companyId: number, unitIds: number[]): Promise<Set<number>> {
      const { rows } = await pool.query<{ id: number }>(sql.liveUnitsOfCompany, [companyId, unitIds]);
      return new Set(rows.map((row) => row.id));
    },

    async createToken(token: NewToken): Promise<ApiTokenRecord> {
      const id = await inTransaction(pool, async (client) => {
        const { rows } = await client.query<{ id: string; allowed_ips: string[] }>(sql.insertToken, [
          token.companyId,
          token.name,
          token.scopes,
          token.tokenHash,
          token.expiresAt,
          token.now,
          token.createdBy,
          null,
          token.allowedIps,
        ]);
        const id = rows[0]!.id;
        if (token.coolingUnitIds.length > 0) {
          await client.query(sql.insertTokenUnits, [id, token.coolingUnitIds]);
        }
        await recordTokenEvent(client, {
          companyId: token.companyId,
          action: 'token.created',
          tokenId: id,
          occurredAt: token.now,
          origin: token.origin,
          details: {
            name: token.name,
            scopes: token.scopes,
            cooling_unit_ids: token.coolingUnitIds,
            // as stored: the text every later read shows
            allowed_ips: rows[0]!.allowed_ips,
            expires_at: token.expiresAt?.toISOString() ?? null,
          },
        });
        return id;
      });
      // read back only after releasing the client: with a pool of one it would wait on itself
      return (await findToken(token.companyId, id))!;
    },

    async listTokens(companyId: number, state: TokenState | null, now: Date, limit: number, offset: number) {
      const [list, count] = await Promise.all([
        pool.query<TokenRow>(sql.listTokens, [companyId, state, now, limit, offset]),
        pool.query<{ total_count: number }>(sql.countTokens, [companyId, state, now]),
      ]);
      return { records: list.rows.map(toRecord), totalCount: count.rows[0]!.total_count };
    },

    /**
     * Null when the company has no such token. Revoking twice keeps the first revoked_at, and only
     * the revoke that changed the token records an event. `beforeCommit` runs inside the
     * transaction once the row is marked, and only when this call revokes it: if it throws (the
     * revocation cannot reach every process), nothing is committed, the event neither.
     */
    async revokeToken(
      companyId: number,
      tokenId: string,
      now: Date,
      origin: ActionOrigin,
      beforeCommit: (tokenId: string) => Promise<void>,
    ) {
      return inTransaction(pool, async (client) => {
        const { rows } = await client.query<{ revoked: boolean }>(sql.lockTokenForRevoke, [companyId, tokenId]);
        if (!rows[0] || rows[0].revoked) return { found: rows.length > 0, revokedNow: false };
        await client.query(sql.revokeToken, [companyId, tokenId, now]);
        await beforeCommit(tokenId);
        await recordTokenEvent(client, { companyId, action: 'token.revoked', tokenId, occurredAt: now, origin });
        return { found: true, revokedNow: true };
      });
    },

    /**
     * Creates the replacement (same name, scopes, units, allow-list and expiry) and brings the old token's
     * expiry forward, in one transaction that holds the old row's lock. `beforeCommit` runs once
     * both are written, with the old token's new expiry: if it throws (the expiry cannot reach
     * every process), nothing is committed, the audit event neither.
     */
    async rotateToken(rotation: Rotation, beforeCommit: (tokenId: string, expiresAt: Date) => Promise<void>): Promise<RotationOutcome> {
      const { companyId, tokenId, now } = rotation;
      try {
        return await inTransaction(pool, async (client): Promise<RotationOutcome> => {
          const locked = await client.query(sql.lockTokenForRotate, [companyId, tokenId]);
          if (locked.rows.length === 0) return { kind: 'not_found' };
          const { rows } = await client.query<{
            name: string;
            scopes: Scope[];
            expires_at: Date | null;
            revoked: boolean;
            allowed_ips: string[];
            replaced: boolean;
          }>(sql.tokenToRotate, [companyId, tokenId]);
          const old = rows[0]!;
          const refusal: RotationRefusal | null = old.revoked
            ? 'revoked'
            : old.replaced
              ? 'already_rotated'
              : old.expires_at && old.expires_at.getTime() <= now.getTime()
                ? 'expired'
                : null;
          if (refusal) return { kind: 'refused', reason: refusal };
          const inserted = await client.query<{ id: string }>(sql.insertToken, [
            companyId,
            old.name,
            old.scopes,
            rotation.tokenHash,
            old.expires_at,
            now,
            rotation.rotatedBy,
            tokenId,
            old.allowed_ips,
          ]);
          const replacementId = inserted.rows[0]!.id;
          await client.query(sql.copyTokenUnits, [tokenId, replacementId]);
          const ended = await client.query<{ expires_at: Date }>(sql.bringExpiryForward, [
            companyId,
            tokenId,
            new Date(now.getTime() + rotation.graceMs),
          ]);
          await beforeCommit(tokenId, ended.rows[0]!.expires_at);
          await recordTokenEvent(client, {
            companyId,
            action: 'token.rotated',
            tokenId,
            relatedTokenId: replacementId,
            occurredAt: now,
            origin: rotation.origin,
            details: {
              grace_period_seconds: rotation.graceMs / SECOND_MS,
              old_token_expires_at: ended.rows[0]!.expires_at.toISOString(),
              // what the replacement carries over: the allow-list is the one setting a rotation could
              // silently change, so the trail shows it
              allowed_ips: old.allowed_ips,
            },
          });
          return { kind: 'rotated', replacementId };
        });
      } catch (error) {
        // two rotations raced past the lock's snapshot: the index let one through
        if (
          (error as { code?: string }).code === UNIQUE_VIOLATION &&
          (error as { constraint?: string }).constraint === 'api_tokens_rotated_from_idx'
        ) {
          return { kind: 'refused', reason: 'already_rotated' };
        }
        throw error;
      }
    },
  };
}

export type TokenRepository = ReturnType<typeof createTokenRepository>;
