// The store behind @fastify/rate-limit: one fixed window per key in Redis, counted by an atomic
// script (INCR + PEXPIRE in one round trip), exact across processes and instances. When Redis
// can't answer within its short timeout, the request is counted by a per-process fallback with
// the limit divided by the worker count, and the outage is reported once, until Redis is back
// (src/redis/outage.ts: back once it has answered for a while, not at its first answer). A window
// can also be read without counting (peek: a conditional request, which a 304 leaves uncounted).
import type { RedisClient } from '../redis/connection.js';
import { createOutageTracker } from '../redis/outage.js';
import { readFileSync } from 'node:fs';
import { inSpan } from '../tracing/spans.js';

// one fixed window per key, in Lua so the count and its expiry are one atomic step; the file is
// shared with the bench's reference server
const WINDOW_SCRIPT = readFileSync(new URL('./fixed-window.lua', import.meta.url), 'utf8');

// A window read without counting (a conditional request that may be a 304, which is not counted:
// src/data-surface/conditional-requests.ts): its count and its end as Unix ms (0: no window).
const PEEK_SCRIPT = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then return {current, 0} end
local time = redis.call('TIME')
return {current, tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000) + ttl}`;

// the spans of the two scripts (src/tracing/spans.ts): the command, never the key (it names a token)
const WINDOW_SPAN = { 'db.system.name': 'redis', 'db.operation.name': 'EVALSHA', 'coldtrack.redis.script': 'rate-limit window' };
const PEEK_SPAN = { 'db.system.name': 'redis', 'db.operation.name': 'EVALSHA', 'coldtrack.redis.script': 'rate-limit peek' };

type Callback = (error: Error | null, result?: { current: number; ttl: number }) => void;

/** A window as it stands: requests counted in it, and ms until it ends (until a new one would, when there is none). */
export interface WindowState {
  current: number;
  ttl: number;
}

/** The end of a window that starts now: a whole second, as the Redis script rounds it. */
export function windowEnd(now: number, windowMs: number): number {
  const endsAt = Math.floor((now + windowMs) / 1000) * 1000;
  return endsAt > now ? endsAt : now + windowMs;
}

export interface StoreEvents {
  /** Redis stopped answering: counting per process, for the commands that fail, until it is back. Once per outage. */
  onDegraded?: (error: unknown) => void;
  /** Redis has answered every command for a while (src/redis/outage.ts). Once per outage. */
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
      window = { count: 0, resetAt: windowEnd(now, windowMs) };
      this.windows.set(key, window);
    }
    window.count++;
    return { current: window.count, ttl: window.resetAt - now };
  }

  peek(key: string, windowMs: number, now = Date.now()): WindowState {
    const window = this.windows.get(key);
    if (!window || window.resetAt <= now) return { current: 0, ttl: windowEnd(now, windowMs) - now };
    return { current: window.count, ttl: window.resetAt - now };
  }

  private sweep(now: number) {
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}

export function createRateLimitStore(
  redis: RedisClient | null,
  workers: number,
  defaultWindowMs: number,
  events: StoreEvents = {},
  keyPrefix = 'coldtrack:rl:',
) {
  const local = new LocalWindows();
  const outage = createOutageTracker({ onLost: (error) => events.onDegraded?.(error), onBack: () => events.onRecovered?.() });
  if (redis && !redis.ratelimitWindow) {
    redis.defineCommand('ratelimitWindow', { numberOfKeys: 1, lua: WINDOW_SCRIPT });
  }
  if (redis && !redis.ratelimitPeek) {
    redis.defineCommand('ratelimitPeek', { numberOfKeys: 1, lua: PEEK_SCRIPT });
  }

  /** The class @fastify/rate-limit instantiates (`new Store(options)`). */
  return class SharedWindowStore {
    // the plugin passes the window as a third argument (its typings omit it)
    incr(key: string, callback: Callback, windowMs = defaultWindowMs) {
      if (!redis) {
        callback(null, local.incr(key, windowMs));
        return;
      }
      inSpan('redis rate-limit window', WINDOW_SPAN, () => redis.ratelimitWindow!(keyPrefix + key, windowMs)).then(
        ([current, endsAt]) => {
          outage.succeeded();
          // time left by this process's clock, not as Redis measured it: the reply may have waited
          // in a busy event loop, and Reset (now + ttl, rounded) must name the same second
          // throughout the window
          const ttl = Math.min(windowMs, Math.max(0, endsAt - Date.now()));
          callback(null, { current, ttl });
        },
        (error: unknown) => {
          outage.failed(error);
          // each process may admit limit / workers: scaling the local count keeps the plugin's
          // `current > max` comparison right
          const { current, ttl } = local.incr(key, windowMs);
          callback(null, { current: current * workers, ttl });
        },
      );
    }

    /** The window of `key` without counting this request; Redis's count when it answers, else this process's share. */
    async peek(key: string, windowMs = defaultWindowMs): Promise<WindowState> {
      if (!redis) return local.peek(key, windowMs);
      try {
        const [current, endsAt] = await inSpan('redis rate-limit peek', PEEK_SPAN, () => redis.ratelimitPeek!(keyPrefix + key));
        outage.succeeded();
        const now = Date.now();
        return { current, ttl: endsAt === 0 ? windowEnd(now, windowMs) - now : Math.min(windowMs, Math.max(0, endsAt - now)) };
      } catch (error) {
        outage.failed(error);
        const { current, ttl } = local.peek(key, windowMs);
        return { current: current * workers, ttl };
      }
    }

    child() {
      return new SharedWindowStore();
    }
  };
}

declare module 'ioredis' {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- the augmented interface's own type parameter
  interface RedisCommander<Context> {
    ratelimitWindow?(key: string, windowMs: number): Promise<[number, number]>;
    ratelimitPeek?(key: string): Promise<[number, number]>;
  }
}
