// The six rate-limit scopes (src/rate-limit/limits.ts) as a service, shared through Redis when
// there is one, and the hook that limits requests no auth hook counts: unknown paths and the
// public validate endpoint, by client IP. Authenticated routes count in their auth hooks. Also the
// leases that bound a token's long streams (bulk slices) across processes (rate-limit/stream-leases.ts).
import fp from 'fastify-plugin';
import type { RedisClient } from '../redis/connection.js';
import { RATE_LIMITS, type RateLimiter, type RateLimitScope, registerRateLimits } from '../rate-limit/limits.js';
import { createStreamLeases, type StreamLeases } from '../rate-limit/stream-leases.js';
import type { App } from '../types.js';

declare module 'fastify' {
  interface FastifyInstance {
    rateLimits: RateLimiter;
    /** a token's streams at once, across workers and instances with Redis (GET /api/v1/sensor-data/bulk) */
    streamLeases: StreamLeases;
  }
  interface FastifyContextConfig {
    /** A public route limited by client IP under this scope (e.g. validate-cooling-user-id). */
    ipRateLimit?: RateLimitScope;
  }
}

export interface RateLimitPluginOptions {
  redis: RedisClient | null;
  /** Tests only: lift limits that a test of something else would trip over. */
  overrides?: Partial<Record<RateLimitScope, number>> | undefined;
  /** Tests only: a shorter window than the spec's minute, for tests that wait one out. */
  windowMs?: number | undefined;
}

async function rateLimits(app: App, options: RateLimitPluginOptions) {
  const { config, metrics } = app;
  // every scope's series from the start at 0: a spike alert compares with the hour before
  for (const scope of Object.keys(RATE_LIMITS) as RateLimitScope[]) metrics.rateLimitRejections.inc({ scope }, 0);
  app.decorate(
    'rateLimits',
    await registerRateLimits(app, {
      redis: options.redis,
      workers: config.workers,
      maxOverrides: options.overrides,
      windowMs: options.windowMs,
      onRejected: (scope) => metrics.rateLimitRejections.inc({ scope }),
      keyPrefix: `${config.redisKeyPrefix}rl:`,
      onDegraded: (error) => {
        metrics.rateLimitFallbacks.inc();
        metrics.rateLimitFallbackActive.set(1);
        app.log.error({ err: error }, 'Redis unavailable: rate limits fall back to per-process counting');
      },
      onRecovered: () => {
        metrics.rateLimitFallbackActive.set(0);
        app.log.warn('Redis is back: rate limits are shared again');
      },
    }),
  );
  app.decorate(
    'streamLeases',
    createStreamLeases({
      redis: options.redis,
      keyPrefix: `${config.redisKeyPrefix}lease:`,
      onDegraded: (error) => app.log.error({ err: error }, 'Redis unavailable: bulk streams of a token are limited per process'),
      onRecovered: () => app.log.warn('Redis is back: bulk streams of a token are limited across processes again'),
    }),
  );
  // callback style: most requests (data and management routes count in their auth hooks) pass
  // through without a promise (src/plugins/http.ts)
  app.addHook('onRequest', (request, reply, done) => {
    const scope = request.routeOptions.config.ipRateLimit;
    const check = scope
      ? app.rateLimits.check(scope, request.ip, request, reply)
      : request.is404
        ? app.rateLimits.checkPublic(request, reply)
        : null;
    if (!check) return done();
    check.then(() => done(), done);
  });
}

export default fp(rateLimits, { name: 'rate-limits', dependencies: ['config', 'metrics'] });
