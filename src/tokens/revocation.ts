// Revocation fan-out: once a revoke call has answered 2xx, no process of any instance accepts the
// token again, whatever Redis does before, during or after. Each process caches tokens, so:
// - in process: listeners drop the token from the cache synchronously (before and after commit);
// - across processes: the revoke writes a Redis marker *inside* its database transaction, before
//   COMMIT (src/tokens/repository.ts): if Redis cannot take it, the transaction rolls back and the
//   call answers 503, having changed nothing. Every data request checks the marker (in the same
//   Redis round trip as its rate limit); a pub/sub message also evicts the token elsewhere.
// - Redis that forgets (restarted empty, flushed, failed over to an empty replica): markers are
//   gone, so every check also reads the store's *epoch*, a random value set once per Redis
//   lifetime. A missing or changed epoch means "markers may have been lost": the process drops
//   every cached token and re-reads them from PostgreSQL, which holds the truth.
// - Redis unreachable: the check answers 'unknown' and the caller re-reads the token from
//   PostgreSQL instead of trusting its cache.
// Rotation rides the same bus: the old token's expiry is brought forward in the database, and a
// marker saying "expires at <ms>" (instead of "revoked") reaches every process the same way, so a
// cached row's later expiry is never trusted past the new one.
// The marker only needs to outlive the cache TTL: after that no cache holds the old row.
import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis/connection.js';
import { inSpan } from '../tracing/spans.js';
import { TOKEN_CACHE_TTL_MS } from './cache-ttl.js';

const MARKER_TTL_SECONDS = Math.ceil((TOKEN_CACHE_TTL_MS * 4) / 1000);

export type RevocationStatus =
  | { state: 'revoked' }
  /** expiresAt: an earlier end a rotation announced (epoch ms); null: none */
  | { state: 'live'; expiresAt: number | null }
  /** the shared store can't answer or may have forgotten: re-read the token, trust no cache */
  | { state: 'unknown'; expiresAt: number | null };

// the span of the per-request check (src/tracing/spans.ts): the command, never the keys
const CHECK_SPAN = { 'db.system.name': 'redis', 'db.operation.name': 'MGET' };

// marker values: a revoked token, or a token whose expiry a rotation brought forward
const REVOKED = '1';
const EXPIRES_AT = 'exp:';
const expiryMarker = (expiresAt: number) => `${EXPIRES_AT}${expiresAt}`;

/** What a marker says; a value this code did not write counts as revoked (fail closed). */
function readMarker(marker: string | null): { revoked: boolean; expiresAt: number | null } {
  if (marker === null) return { revoked: false, expiresAt: null };
  const expiresAt = marker.startsWith(EXPIRES_AT) ? Number(marker.slice(EXPIRES_AT.length)) : NaN;
  return Number.isSafeInteger(expiresAt) ? { revoked: false, expiresAt } : { revoked: true, expiresAt: null };
}

// deletes the marker only if it still holds what the withdrawing call wrote: a revoke that
// committed in between keeps its marker
const DELETE_IF_EQUAL = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

export interface RevocationBus {
  /**
   * Makes every process refuse the token from now on. Throws when the shared store cannot take
   * it: the caller must then not commit the revoke.
   */
  announce(tokenId: string): Promise<void>;
  /**
   * Makes every process refuse the token from `expiresAt` (epoch ms) on, whatever expiry its cache
   * holds (a rotation). Throws like announce: the caller must then not commit.
   */
  announceExpiry(tokenId: string, expiresAt: number): Promise<void>;
  /**
   * The revoke (or rotation, given its `expiresAt`) did not commit after all: its marker goes
   * again (best effort; a marker another call has written since stays).
   */
  withdraw(tokenId: string, expiresAt?: number): Promise<void>;
  /** The revoke or rotation committed: this process's caches forget the token (again). */
  committed(tokenId: string): void;
  /** 'unknown' when the shared store can't answer or may have forgotten: don't trust a cache then. */
  status(tokenId: string): Promise<RevocationStatus>;
  /** Whether the shared store answers (readiness); true when there is none. */
  reachable(): Promise<boolean>;
  onRevoked(listener: (tokenId: string) => void): void;
  /** The shared store may have lost revocations: every cached token must be re-read. */
  onForgotten(listener: () => void): void;
  close(): Promise<void>;
}

/**
 * keyPrefix: REDIS_KEY_PREFIX, so deployments sharing one Redis never see each other's revocations.
 * The keys share one hash tag, so the check's MGET is one slot on a Redis Cluster.
 */
export function createRevocationBus(redis: RedisClient | null, subscriber: RedisClient | null, keyPrefix = 'coldtrack:'): RevocationBus {
  const CHANNEL = `${keyPrefix}token-revoked`;
  const markerKey = (tokenId: string) => `${keyPrefix}{revocations}:token:${tokenId}`;
  const EPOCH_KEY = `${keyPrefix}{revocations}:epoch`;
  const revokedListeners: Array<(tokenId: string) => void> = [];
  const forgottenListeners: Array<() => void> = [];
  const notify = (tokenId: string) => revokedListeners.forEach((listener) => listener(tokenId));
  const forget = () => forgottenListeners.forEach((listener) => listener());
  /** The epoch this process's caches were filled under; null before the first check. */
  let knownEpoch: string | null = null;

  if (subscriber) {
    subscriber.on('message', (channel: string, tokenId: string) => {
      if (channel === CHANNEL) notify(tokenId);
    });
    // (re)subscribe whenever the connection becomes ready: commands are not queued while offline
    const subscribe = () => void subscriber.subscribe(CHANNEL).catch(() => {});
    subscriber.on('ready', subscribe);
    if (subscriber.status === 'ready') subscribe();
  }

  /** A new epoch when Redis has none (its first use, or it lost its data); the current one. */
  async function establishEpoch(client: RedisClient): Promise<string | null> {
    const [, current] = (await client.multi().set(EPOCH_KEY, randomUUID(), 'NX').get(EPOCH_KEY).exec()) ?? [];
    return (current?.[1] as string | null | undefined) ?? null;
  }

  async function writeMarker(tokenId: string, marker: string) {
    notify(tokenId);
    if (!redis) return;
    const results = await redis.multi().set(markerKey(tokenId), marker, 'EX', MARKER_TTL_SECONDS).publish(CHANNEL, tokenId).exec();
    const failed = results?.find(([error]) => error)?.[0];
    if (!results || failed) throw failed ?? new Error('Redis did not run the revocation');
  }

  return {
    announce: (tokenId) => writeMarker(tokenId, REVOKED),
    announceExpiry: (tokenId, expiresAt) => writeMarker(tokenId, expiryMarker(expiresAt)),
    async withdraw(tokenId, expiresAt) {
      const marker = expiresAt === undefined ? REVOKED : expiryMarker(expiresAt);
      await redis?.eval(DELETE_IF_EQUAL, 1, markerKey(tokenId), marker).catch(() => {});
    },
    committed(tokenId) {
      notify(tokenId);
    },
    async status(tokenId) {
      if (!redis) return { state: 'live', expiresAt: null };
      try {
        const [marker, storedEpoch] = await inSpan('redis revocation check', CHECK_SPAN, () => redis.mget(markerKey(tokenId), EPOCH_KEY));
        let epoch = storedEpoch;
        const { revoked, expiresAt } = readMarker(marker ?? null);
        if (!epoch) epoch = await establishEpoch(redis);
        if (epoch !== knownEpoch) {
          // Redis lost its memory since the last check, or this is the process's first successful
          // one (its cache may hold rows read while Redis was away): re-read, trust nothing cached
          forget();
          knownEpoch = epoch ?? null;
          return revoked ? { state: 'revoked' } : { state: 'unknown', expiresAt };
        }
        return revoked ? { state: 'revoked' } : { state: 'live', expiresAt };
      } catch {
        return { state: 'unknown', expiresAt: null };
      }
    },
    async reachable() {
      if (!redis) return true;
      // a command on the revocation keys' slot, not a PING: a Redis Cluster whose node for that
      // slot is down (or that is not serving at all) still answers PING from the others
      return redis.exists(EPOCH_KEY).then(
        () => true,
        () => false,
      );
    },
    onRevoked(listener) {
      revokedListeners.push(listener);
    },
    onForgotten(listener) {
      forgottenListeners.push(listener);
    },
    async close() {
      await subscriber?.unsubscribe(CHANNEL).catch(() => {});
    },
  };
}
