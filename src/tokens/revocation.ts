// Revocation fan-out. A revoke must stop the token on every process of every instance before the
// revoke call returns, although each process caches tokens:
// - in process: listeners drop the token from the cache synchronously;
// - across processes: the revoke writes a short-lived Redis marker *before* it returns, and every
//   data request checks the marker (one round trip, folded into the rate-limit script later);
//   a pub/sub message also evicts the token from other processes' caches.
// The marker only needs to outlive the cache TTL: after that no cache holds the old row.
import type { Redis } from 'ioredis';
import { TOKEN_CACHE_TTL_MS } from './authenticator.js';

const MARKER_TTL_SECONDS = Math.ceil((TOKEN_CACHE_TTL_MS * 4) / 1000);

export type RevocationStatus = 'revoked' | 'not-revoked' | 'unknown';

export interface RevocationBus {
  announce(tokenId: string): Promise<void>;
  /** 'unknown' when the shared store can't answer: the caller must not trust its cache then. */
  status(tokenId: string): Promise<RevocationStatus>;
  onRevoked(listener: (tokenId: string) => void): void;
  close(): Promise<void>;
}

/** keyPrefix: REDIS_KEY_PREFIX, so deployments sharing one Redis never see each other's revocations. */
export function createRevocationBus(redis: Redis | null, subscriber: Redis | null, keyPrefix = 'coldtrack:'): RevocationBus {
  const CHANNEL = `${keyPrefix}token-revoked`;
  const markerKey = (tokenId: string) => `${keyPrefix}revoked:${tokenId}`;
  const listeners: Array<(tokenId: string) => void> = [];
  const notify = (tokenId: string) => listeners.forEach((listener) => listener(tokenId));

  if (subscriber) {
    subscriber.on('message', (channel: string, tokenId: string) => {
      if (channel === CHANNEL) notify(tokenId);
    });
    // (re)subscribe whenever the connection becomes ready: commands are not queued while offline
    const subscribe = () => void subscriber.subscribe(CHANNEL).catch(() => {});
    subscriber.on('ready', subscribe);
    if (subscriber.status === 'ready') subscribe();
  }

  return {
    async announce(tokenId) {
      notify(tokenId);
      if (!redis) return;
      await redis.multi().set(markerKey(tokenId), '1', 'EX', MARKER_TTL_SECONDS).publish(CHANNEL, tokenId).exec();
    },
    async status(tokenId) {
      if (!redis) return 'not-revoked';
      try {
        return (await redis.exists(markerKey(tokenId))) ? 'revoked' : 'not-revoked';
      } catch {
        return 'unknown';
      }
    },
    onRevoked(listener) {
      listeners.push(listener);
    },
    async close() {
      await subscriber?.unsubscribe(CHANNEL).catch(() => {});
    },
  };
}
