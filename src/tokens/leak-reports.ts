// Storage side of leak reports: a reported token found by its hash, and the one transaction that
// records the leak and, for a live token, revokes it. Both events go in the same transaction as
// the revoke (src/audit/events.ts): the trail never shows a revoke without its cause, or a cause
// of a revoke that did not happen.
import type pg from 'pg';
import { type ActionOrigin, recordTokenEvent } from '../audit/events.js';
import { inTransaction } from '../db/pool.js';
import { loadQueries } from '../db/sql.js';
import type { TokenState } from './scopes.js';

const sql = loadQueries('token-leaks', ['tokensByHash', 'lockReportedToken', 'leakAlreadyReported']);
const tokenSql = loadQueries('api-tokens', ['revokeToken']);

/** Where the reporter found the token: kept in both events' details. */
export interface LeakSighting {
  /** the public URL of the match; null when the reporter gave none */
  url: string | null;
  /** the reporter's word for the kind of place (GitHub: content, commit, issue_comment, npm...) */
  source: string;
}

export interface LeakOutcome {
  /** the token's state when the report came (a live token is 'active' and is now revoked) */
  stateBefore: TokenState;
  revokedNow: boolean;
}

export function createLeakReportRepository(pool: pg.Pool) {
  return {
    /** The tokens these hashes belong to, in whichever company holds each, by hash (hex). */
    async tokensByHash(hashes: Buffer[]): Promise<Map<string, { id: string; companyId: number }>> {
      const found = new Map<string, { id: string; companyId: number }>();
      if (hashes.length === 0) return found;
      const { rows } = await pool.query<{ id: string; company_id: number; token_hash: Buffer }>(sql.tokensByHash, [hashes]);
      for (const row of rows) found.set(row.token_hash.toString('hex'), { id: row.id, companyId: row.company_id });
      return found;
    },

    /**
     * Records the leak and revokes the token if it is live (not revoked, not expired).
     * `beforeCommit` runs inside the transaction once the row is marked, only when this call
     * revokes it: if it throws (the revocation cannot reach every process), nothing is committed.
     * A token already revoked or expired is not changed; its leak is recorded unless the same
     * sighting already is (a replayed report adds nothing). Null: the token is gone.
     */
    async recordLeak(
      companyId: number,
      tokenId: string,
      sighting: LeakSighting,
      now: Date,
      origin: ActionOrigin,
      beforeCommit: (tokenId: string) => Promise<void>,
    ): Promise<LeakOutcome | null> {
      return inTransaction(pool, async (client) => {
        const locked = await client.query<{ state: TokenState }>(sql.lockReportedToken, [companyId, tokenId, now]);
        if (!locked.rows[0]) return null;
        const stateBefore = locked.rows[0].state;
        const details = { url: sighting.url, source: sighting.source };
        const event = { companyId, tokenId, occurredAt: now, origin, details };
        if (stateBefore !== 'active') {
          const seen = await client.query<{ reported: boolean }>(sql.leakAlreadyReported, [
            companyId,
            tokenId,
            sighting.url,
            sighting.source,
          ]);
          if (!seen.rows[0]!.reported) {
            await recordTokenEvent(client, { ...event, action: 'token.leak_reported', details: { ...details, token_state: stateBefore } });
          }
          return { stateBefore, revokedNow: false };
        }
        await client.query(tokenSql.revokeToken, [companyId, tokenId, now]);
        await beforeCommit(tokenId);
        await recordTokenEvent(client, { ...event, action: 'token.leak_reported', details: { ...details, token_state: stateBefore } });
        await recordTokenEvent(client, { ...event, action: 'token.revoked_leaked' });
        return { stateBefore, revokedNow: true };
      });
    },
  };
}

export type LeakReportRepository = ReturnType<typeof createLeakReportRepository>;
