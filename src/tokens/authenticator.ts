// API-token authentication for the data surface. Shape and checksum first (no I/O for garbage),
// then the SHA-256 through an in-process LRU cache, so a warm token costs no database query.
// Revocation and expiry are re-checked on every request from the cached row and the revocation
// bus (which also carries an expiry a rotation brought forward); the cache TTL is only a safety net.
import { LRUCache } from 'lru-cache';
import type pg from 'pg';
import { lookup } from '../db/pool.js';
import { loadQueries } from '../db/sql.js';
import { unauthorized } from '../http/errors.js';
import type { Clock } from '../time.js';
import { annotateSpan } from '../tracing/spans.js';
import { type AllowList, compileAllowList } from './allowed-ips.js';
import { TOKEN_CACHE_TTL_MS } from './cache-ttl.js';
import { hashToken, isWellFormedToken } from './format.js';
import type { LastUsedRecorder } from './last-used.js';
import type { RevocationBus } from './revocation.js';
import type { Scope } from './scopes.js';

const sql = loadQueries('api-tokens', ['tokenForAuth']);

const UNKNOWN_TOKEN_TTL_MS = 5_000;

export interface AuthenticatedToken {
  id: string;
  companyId: number;
  scopes: ReadonlySet<Scope>;
  /** empty: company-wide */
  coolingUnitIds: readonly number[];
  /** the addresses it may be used from, compiled once per cached row; null: any (src/tokens/allowed-ips.ts) */
  allowedIps: AllowList | null;
  expiresAt: number | null;
  revoked: boolean;
}

type CacheEntry = { token: AuthenticatedToken } | { token: null };

interface TokenRow {
  id: string;
  company_id: number;
  scopes: Scope[];
  expires_at: Date | null;
  revoked: boolean;
  cooling_unit_ids: number[];
  allowed_ips: string[];
}

export interface TokenAuthenticatorOptions {
  pool: pg.Pool;
  clock: Clock;
  revocations: RevocationBus;
  lastUsed: LastUsedRecorder;
  onCacheLookup?: (hit: boolean) => void;
}

export function createTokenAuthenticator(options: TokenAuthenticatorOptions) {
  const { pool, clock, revocations, lastUsed } = options;
  const cache = new LRUCache<string, CacheEntry>({ max: 50_000, ttl: TOKEN_CACHE_TTL_MS });
  // bumped by every revocation: a lookup that started before one must not cache what it read
  let generation = 0;

  revocations.onRevoked((tokenId) => {
    generation++;
    for (const [key, entry] of cache.entries()) {
      if (entry.token?.id === tokenId) cache.delete(key);
    }
  });
  // the shared store may have lost revocations (Redis restarted empty): trust no cached row
  revocations.onForgotten(() => {
    generation++;
    cache.clear();
  });

  async function load(key: string, hash: Buffer): Promise<CacheEntry> {
    const startedAt = generation;
    const { rows } = await lookup<TokenRow>(pool, sql.tokenForAuth, [hash]);
    const row = rows[0];
    const entry: CacheEntry = row
      ? {
          token: {
            id: row.id,
            companyId: row.company_id,
            scopes: new Set(row.scopes),
            coolingUnitIds: row.cooling_unit_ids,
            allowedIps: compileAllowList(row.allowed_ips),
            expiresAt: row.expires_at?.getTime() ?? null,
            revoked: row.revoked,
          },
        }
      : { token: null };
    if (generation === startedAt) cache.set(key, entry, { ttl: row ? TOKEN_CACHE_TTL_MS : UNKNOWN_TOKEN_TTL_MS });
    return entry;
  }

  return {
    /**
     * `alongside` runs concurrently with the per-request revocation check (the rate limit): both
     * Redis commands are out at once, so together they cost one round trip.
     */
    async authenticate(rawToken: string, alongside?: (token: AuthenticatedToken) => Promise<void>): Promise<AuthenticatedToken> {
      if (!isWellFormedToken(rawToken)) throw unauthorized('Invalid API token');
      const hash = hashToken(rawToken);
      const key = hash.toString('base64');
      // a revocation or a cleared cache while this request waits on the revocation check makes
      // the row it read here stale, even when the check itself then answers "live" (another
      // request may have been the one to find Redis emptied and clear the cache meanwhile)
      const readAt = generation;
      const cached = cache.get(key);
      options.onCacheLookup?.(cached !== undefined);
      annotateSpan('coldtrack.token.cache', cached ? 'hit' : 'miss'); // on the token check's span (tracing on)
      let entry = cached ?? (await load(key, hash));

      // an expiry a rotation brought forward after this row was cached
      let announcedExpiry: number | null = null;
      if (entry.token && !entry.token.revoked) {
        const [status] = await Promise.all([revocations.status(entry.token.id), alongside?.(entry.token)]);
        if (status.state === 'revoked') throw unauthorized('API token has been revoked');
        announcedExpiry = status.expiresAt;
        // the shared store is away, or forgot: the database is the only safe source of revocations
        if (cached && (status.state === 'unknown' || generation !== readAt)) entry = await load(key, hash);
      }
      const token = entry.token;
      if (!token) throw unauthorized('Invalid API token');
      if (token.revoked) throw unauthorized('API token has been revoked');
      const now = clock.now().getTime();
      const expiresAt = Math.min(token.expiresAt ?? Infinity, announcedExpiry ?? Infinity);
      if (now >= expiresAt) throw unauthorized('API token has expired');
      lastUsed.touch(token.id, new Date(now));
      return token;
    },
    cacheSize: () => cache.size,
  };
}

export type TokenAuthenticator = ReturnType<typeof createTokenAuthenticator>;
