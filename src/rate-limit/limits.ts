// The six rate-limit scopes of the spec, their identities and rates, applied through
// @fastify/rate-limit's createRateLimit with the shared store. Headers are ours: the spec wants
// X-RateLimit-Reset as a Unix timestamp, and a 429 in the service's one error shape.
import rateLimit from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RedisClient } from '../redis/connection.js';
import { ApiError } from '../http/errors.js';
import type { App } from '../types.js';
import { createRateLimitStore } from './store.js';

export const RATE_LIMITS = {
  public_read: { max: 120, identity: 'client IP', appliesTo: 'unauthenticated safe methods' },
  public_write: { max: 20, identity: 'client IP', appliesTo: 'unauthenticated unsafe methods' },
  authenticated_read: { max: 600, identity: 'user id', appliesTo: 'authenticated safe methods' },
  authenticated_write: { max: 120, identity: 'user id', appliesTo: 'authenticated unsafe methods' },
  validate_cooling_user_id_ip: { max: 30, identity: 'client IP', appliesTo: 'POST /v1/users/validate-cooling-user-id/' },
  analytics_api_token: { max: 100, identity: 'API token id', appliesTo: 'data endpoints' },
} as const;

export type RateLimitScope = keyof typeof RATE_LIMITS;
export const RATE_WINDOW_MS = 60_000;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface RateLimitOptions {
  redis: RedisClient | null;
  workers: number;
  onRejected?: (scope: RateLimitScope) => void;
  onDegraded?: (error: unknown) => void;
  onRecovered?: () => void;
  /** Tests of other features lift the limits they would otherwise trip over; never from config. */
  maxOverrides?: Partial<Record<RateLimitScope, number>> | undefined;
  /** Tests that wait a window out shorten it; never from config (the spec's window is a minute). */
  windowMs?: number | undefined;
  /** Where the counters live in Redis (from REDIS_KEY_PREFIX). */
  keyPrefix?: string;
}

export interface RateLimiter {
  /** Counts the request against scope/identity; sets the headers; throws 429 past the limit. */
  check(scope: RateLimitScope, identity: string | number, request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /**
   * The window of scope/identity without counting this request: false when it is spent (the
   * request is then counted, and refused, like any other); else true, with the headers set to the
   * window as it stands (a 304 leaves it unchanged).
   */
  peek(scope: RateLimitScope, identity: string | number, reply: FastifyReply): Promise<boolean>;
  /** The public scope for a request without valid credentials (by client IP). */
  checkPublic(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** The authenticated scope for a management request of this user. */
  checkUser(userId: number, request: FastifyRequest, reply: FastifyReply): Promise<void>;
}

declare module 'fastify' {
  interface FastifyRequest {
    rateLimitKey?: string;
  }
}

export async function registerRateLimits(app: App, options: RateLimitOptions): Promise<RateLimiter> {
  const windowMs = options.windowMs ?? RATE_WINDOW_MS;
  const Store = createRateLimitStore(options.redis, options.workers, windowMs, options, options.keyPrefix);
  await app.register(rateLimit, { global: false, store: Store });
  // the plugin's instance counts; this one, over the same windows, only reads them
  const windows = new Store();
  const maxOf = (scope: RateLimitScope) => options.maxOverrides?.[scope] ?? RATE_LIMITS[scope].max;
  const limiters = Object.fromEntries(
    Object.keys(RATE_LIMITS).map((scope) => [
      scope,
      app.createRateLimit({
        max: maxOf(scope as RateLimitScope),
        timeWindow: windowMs,
        keyGenerator: (request) => request.rateLimitKey!,
      }),
    ]),
  ) as Record<RateLimitScope, ReturnType<App['createRateLimit']>>;

  async function check(scope: RateLimitScope, identity: string | number, request: FastifyRequest, reply: FastifyReply) {
    request.rateLimitKey = `${scope}:${identity}`;
    const result = await limiters[scope](request);
    if (result.isAllowed) return;
    // windows end on a whole second (store.ts): rounding absorbs the milliseconds since the store
    // answered, so every response of one window names the same instant
    const resetAt = Math.round((Date.now() + result.ttl) / 1000);
    reply.header('x-ratelimit-limit', result.max);
    reply.header('x-ratelimit-remaining', result.remaining);
    reply.header('x-ratelimit-reset', resetAt);
    if (result.isExceeded) {
      options.onRejected?.(scope);
      throw new ApiError(
        429,
        'rate_limited',
        `Rate limit of ${result.max} requests a minute exceeded (${scope}); retry after ${result.ttlInSeconds} s`,
        { scope, limit: result.max, reset_at: resetAt },
        { 'retry-after': String(Math.max(1, result.ttlInSeconds)) },
      );
    }
  }

  async function peek(scope: RateLimitScope, identity: string | number, reply: FastifyReply) {
    const max = maxOf(scope);
    const { current, ttl } = await windows.peek(`${scope}:${identity}`, windowMs);
    if (current >= max) return false;
    reply.header('x-ratelimit-limit', max);
    reply.header('x-ratelimit-remaining', max - current);
    reply.header('x-ratelimit-reset', Math.round((Date.now() + ttl) / 1000));
    return true;
  }

  return {
    check,
    peek,
    checkPublic: (request, reply) => check(SAFE_METHODS.has(request.method) ? 'public_read' : 'public_write', request.ip, request, reply),
    checkUser: (userId, request, reply) =>
      check(SAFE_METHODS.has(request.method) ? 'authenticated_read' : 'authenticated_write', userId, request, reply),
  };
}
