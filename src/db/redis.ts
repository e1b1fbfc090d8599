// Redis clients. Commands fail fast when Redis is away (no offline queue, short timeout), so a
// Redis outage degrades the service instead of stalling requests behind a reconnect.
import { Redis } from 'ioredis';

// short enough that no request waits long on a Redis that is away, long enough that a busy event
// loop (a timer can fire before a reply already in the socket is read) doesn't fake an outage
export const REDIS_COMMAND_TIMEOUT_MS = 500;

export function createRedis(url: string, name: string): Redis {
  const redis = new Redis(url, {
    connectionName: `coldtrack-${name}`,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 1000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    lazyConnect: false,
    // commands issued in the same tick share one write: the revocation check and the rate-limit
    // script of a data request cost one network round trip together
    enableAutoPipelining: true,
  });
  // errors surface on the commands that fail; the client keeps reconnecting on its own
  redis.on('error', () => {});
  return redis;
}

/** Resolves when the client is connected, or after timeoutMs (Redis may come later: we degrade). */
export async function redisReady(redis: Redis, timeoutMs = 3000): Promise<boolean> {
  if (redis.status === 'ready') return true;
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
