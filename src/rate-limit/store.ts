// The store behind @fastify/rate-limit: one fixed window per key in Redis, counted by an atomic
// script (INCR + PEXPIRE in one round trip), exact across processes and instances. When Redis
// can't answer within its short timeout, the request is counted by a per-process fallback with
// the limit divided by the worker count, and the outage is reported once, until Redis is back.
import type { Redis } from 'ioredis';

const WINDOW_SCRIPT = `
local current = redis.call('INCR', KEYS[1])
if current == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return {current, tonumber(ARGV[1])}
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {current, ttl}`;

type Callback = (error: Error | null, result?: { current: number; ttl: number }) => void;

export interface StoreEvents {
  /** Redis stopped answering: counting per process until it is back. */
  onDegraded?: (error: unknown) => void;
  onRecovered?: () => void;
}

interface LocalWindow {
  count: number;
  resetAt: number;
}

/** Per-process fixed windows; also the whole store when there is no Redis (one process). */
class LocalWindows {
  private windows = new Map<string, LocalWindow>();

  incr(key: string, windowMs: number, now = Date.now()): { current: number; ttl: number } {
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      if (this.windows.size > 100_000) this.sweep(now);
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count++;
    return { current: window.count, ttl: window.resetAt - now };
  }

  private sweep(now: number) {
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}

export function createRateLimitStore(
  redis: Redis | null,
  workers: number,
  defaultWindowMs: number,
  events: StoreEvents = {},
  keyPrefix = 'coldtrack:rl:',
) {
  const local = new LocalWindows();
  let degraded = false;
  if (redis && !redis.ratelimitWindow) {
    redis.defineCommand('ratelimitWindow', { numberOfKeys: 1, lua: WINDOW_SCRIPT });
  }

  /** The class @fastify/rate-limit instantiates (`new Store(options)`). */
  return class SharedWindowStore {
    // the plugin passes the window as a third argument (its typings omit it)
    incr(key: string, callback: Callback, windowMs = defaultWindowMs) {
      if (!redis) {
        callback(null, local.incr(key, windowMs));
        return;
      }
      redis.ratelimitWindow!(keyPrefix + key, windowMs).then(
        ([current, ttl]) => {
          if (degraded) {
            degraded = false;
            events.onRecovered?.();
          }
          callback(null, { current, ttl });
        },
        (error: unknown) => {
          if (!degraded) {
            degraded = true;
            events.onDegraded?.(error);
          }
          // each process may admit limit / workers: scaling the local count keeps the plugin's
          // `current > max` comparison right
          const { current, ttl } = local.incr(key, windowMs);
          callback(null, { current: current * workers, ttl });
        },
      );
    }

    child() {
      return new SharedWindowStore();
    }
  };
}

declare module 'ioredis' {
  interface RedisCommander<Context> {
    ratelimitWindow?(key: string, windowMs: number): Promise<[number, number]>;
  }
}
