// Storage of API tokens for the management surface. Every call is scoped by company id: another
// company's token is indistinguishable from a token that does not exist.
import type pg from 'pg';
import { loadQueries } from '../db/sql.js';
import type { Scope, TokenState } from './scopes.js';

const sql = loadQueries('api-tokens', [
  'liveUnitsOfCompany',
  'insertToken',
  'insertTokenUnits',
  'tokenById',
  'listTokens',
  'countTokens',
  'revokeToken',
]);

export interface ApiTokenRecord {
  id: string;
  name: string;
  company_id: number;
  scopes: Scope[];
  cooling_unit_ids: number[];
  expires_at: string | null;
  last_used_at: string | null;
  revoked: boolean;
  revoked_at: string | null;
  created_at: string;
  created_by: number;
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
    expires_at: iso(row.expires_at),
    last_used_at: iso(row.last_used_at),
    revoked: row.revoked,
    revoked_at: iso(row.revoked_at),
    created_at: row.created_at.toISOString(),
    created_by: row.created_by,
  };
}

export interface NewToken {
  companyId: number;
  createdBy: number;
  name: string;
  scopes: Scope[];
  coolingUnitIds: number[];
  expiresAt: Date | null;
  tokenHash: Buffer;
  now: Date;
}

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
      const client = await pool.connect();
      let id: string;
      try {
        await client.query('BEGIN');
        const { rows } = await client.query<{ id: string }>(sql.insertToken, [
          token.companyId,
          token.name,
          token.scopes,
          token.tokenHash,
          token.expiresAt,
          token.now,
          token.createdBy,
        ]);
        id = rows[0]!.id;
        if (token.coolingUnitIds.length > 0) {
          await client.query(sql.insertTokenUnits, [id, token.coolingUnitIds]);
        }
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
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

    /** Null when the company has no such token. Revoking twice keeps the first revoked_at. */
    async revokeToken(companyId: number, tokenId: string, now: Date): Promise<ApiTokenRecord | null> {
      const { rowCount } = await pool.query(sql.revokeToken, [companyId, tokenId, now]);
      return rowCount ? findToken(companyId, tokenId) : null;
    },
  };
}

export type TokenRepository = ReturnType<typeof createTokenRepository>;
