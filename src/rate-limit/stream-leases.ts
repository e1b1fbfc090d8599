// How many long streams (bulk slices) one token may hold at once, across every worker and instance.
// With Redis, a stream holds a lease: a member of the token's sorted set scored by when it expires
// (Redis's clock), taken by an atomic script only while fewer than the limit are live, renewed by
// the stream while it runs and removed at its end. A process killed mid-stream stops renewing, so
// its slot frees within LEASE_TTL_MS, not never. Without Redis (one process), and for a request
// Redis does not answer within its command timeout (down or hung), the count is this process's
// alone, as the rate limits fall back to per-process counting (src/rate-limit/store.ts): a token
// may then hold the limit on each process (docs/operations.md, "Bulk history").
import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis/connection.js';
import { createOutageTracker } from '../redis/outage.js';

/** How long a lease outlives its last renewal: what a killed holder keeps its slot for, at most. */
export const LEASE_TTL_MS = 15_000;

// the live leases (expired ones dropped first), then one more if there is room: 1, else 0
const ACQUIRE_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[3])
redis.call('PEXPIRE', KEYS[1], ttl)
return 1`;

// only a lease still held is renewed: one that lapsed (the renewals failed, Redis restarted empty)
// may have been given to another stream meanwhile, and is not taken back from it
const RENEW_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local ttl = tonumber(ARGV[1])
local renewed = redis.call('ZADD', KEYS[1], 'XX', 'CH', now + ttl, ARGV[2])
if renewed == 1 then redis.call('PEXPIRE', KEYS[1], ttl) end
return renewed`;

export interface StreamLease {
  /** Ends the lease (idempotent); a release Redis does not take lapses within LEASE_TTL_MS. */
  release(): void;
}

export interface StreamLeaseEvents {
  /** Redis did not answer a lease's command: counting per process until it does (once per outage). */
  onDegraded?: (error: unknown) => void;
  onRecovered?: () => void;
}

export interface StreamLeaseOptions extends StreamLeaseEvents {
  redis: RedisClient | null;
  /** where the leases live in Redis (REDIS_KEY_PREFIX + 'lease:') */
  keyPrefix: string;
  ttlMs?: number;
}

export function createStreamLeases(options: StreamLeaseOptions) {
  const { redis, keyPrefix } = options;
  const ttlMs = options.ttlMs ?? LEASE_TTL_MS;
  // a running stream renews its lease this often: two renewals may fail before it lapses
  const renewEveryMs = Math.floor(ttlMs / 3);
  const local = new Map<string, number>();
  const outage = createOutageTracker({ onLost: (error) => options.onDegraded?.(error), onBack: () => options.onRecovered?.() });
  if (redis && !redis.streamLeaseAcquire) redis.defineCommand('streamLeaseAcquire', { numberOfKeys: 1, lua: ACQUIRE_SCRIPT });
  if (redis && !redis.streamLeaseRenew) redis.defineCommand('streamLeaseRenew', { numberOfKeys: 1, lua: RENEW_SCRIPT });

  const holdLocally = (key: string) => local.set(key, (local.get(key) ?? 0) + 1);
  const dropLocally = (key: string) => {
    const left = (local.get(key) ?? 1) - 1;
    if (left > 0) local.set(key, left);
    else local.delete(key);
  };

  return {
    /** A lease on one of `limit` streams of `holder` (a token id), or null: that many are running. */
    async acquire(holder: string, limit: number): Promise<StreamLease | null> {
      // this process's own streams first, synchronously: two requests of one token arriving
      // together on one process cannot both pass while Redis answers
      if ((local.get(holder) ?? 0) >= limit) return null;
      holdLocally(holder);
      if (!redis) return localLease(holder);
      const key = keyPrefix + holder;
      const id = randomUUID();
      let granted: number;
      try {
        granted = await redis.streamLeaseAcquire!(key, limit, ttlMs, id);
        outage.succeeded();
      } catch (error) {
        // down or hung past the command timeout: this process's count decides, as for rate limits
        outage.failed(error);
        return localLease(holder);
      }
      if (granted !== 1) {
        dropLocally(holder);
        return null;
      }
      return sharedLease(holder, key, id);
    },
    /** Streams of `holder` on this process. */
    heldHere: (holder: string) => local.get(holder) ?? 0,
  };

  function localLease(holder: string): StreamLease {
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        dropLocally(holder);
      },
    };
  }

  function sharedLease(holder: string, key: string, id: string): StreamLease {
    const renewal = setInterval(() => {
      redis!.streamLeaseRenew!(key, ttlMs, id).then(
        () => outage.succeeded(),
        (error: unknown) => outage.failed(error),
      );
    }, renewEveryMs);
    renewal.unref();
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        clearInterval(renewal);
        dropLocally(holder);
        redis!.zrem(key, id).then(
          () => outage.succeeded(),
          (error: unknown) => outage.failed(error),
        );
      },
    };
  }
}

export type StreamLeases = ReturnType<typeof createStreamLeases>;

declare module 'ioredis' {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- the augmented interface's own type parameter
  interface RedisCommander<Context> {
    streamLeaseAcquire?(key: string, limit: number, ttlMs: number, id: string): Promise<number>;
    streamLeaseRenew?(key: string, ttlMs: number, id: string): Promise<number>;
  }
}
