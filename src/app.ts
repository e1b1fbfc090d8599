// buildApp(): composes the service. External plugins first, then the services the routes use,
// then the routes. No listening and no process handling here (see server.ts).
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyReply, type FastifyServerOptions } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { createAccessControl } from './analytics/access.js';
import { createRollups, type RollupMode } from './analytics/rollups.js';
import { createJwtVerifier, type JwtVerifier } from './auth/jwt.js';
import { clientErrorHandler } from './http/client-errors.js';
import type { Config } from './config.js';
import { loggerOptions } from './logging.js';
import { registerErrorHandler } from './plugins/error-handler.js';
import { type ClusterScrape, registerMetrics } from './plugins/metrics.js';
import { registerOpenApi } from './plugins/openapi.js';
import { createMetrics } from './observability/metrics.js';
import { type RateLimitScope, registerRateLimits } from './rate-limit/limits.js';
import dataSurfaceRoutes from './routes/data-surface.js';
import apiTokenRoutes from './routes/api-tokens/index.js';
import healthRoutes from './routes/health.js';
import validateCoolingUserIdRoute from './routes/users/validate-cooling-user-id.js';
import { createTokenAuthenticator } from './tokens/authenticator.js';
import { createLastUsedRecorder } from './tokens/last-used.js';
import { createTokenRepository } from './tokens/repository.js';
import { createRevocationBus } from './tokens/revocation.js';
import { systemClock, type App, type Clock } from './types.js';

export interface AppDependencies {
  config: Config;
  pool: pg.Pool;
  clock?: Clock;
  /** Overrides the logger built from config.logLevel (tests capture logs through a stream). */
  logger?: FastifyServerOptions['loggerInstance'];
  jwtVerifier?: JwtVerifier;
  /** Shared state across processes (revocations; rate limits). Null: this process is alone. */
  redis?: { client: Redis; subscriber: Redis } | null;
  /** Revenue/impact rollups on worker threads (default) or inline on the event loop (benchmarks). */
  rollupMode?: RollupMode;
  /** Tests only: lift rate limits that a test of something else would trip over. */
  rateLimitOverrides?: Partial<Record<RateLimitScope, number>>;
  /** In a cluster worker: /metrics answers with the whole cluster's metrics. */
  clusterScrape?: ClusterScrape | undefined;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

export async function buildApp(deps: AppDependencies): Promise<App> {
  const { config } = deps;
  if (!config.jwt) throw new Error('buildApp needs a JWT configuration');

  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: loggerOptions(config.logLevel) }),
    trustProxy: config.trustProxy.length > 0 ? config.trustProxy : false,
    bodyLimit: 64 * 1024,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // a closing worker still answers requests already on its kept-alive connections (with
    // Connection: close) instead of a 503: a rolling restart fails no request
    return503OnClosing: false,
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { maxParamLength: 200 },
    // what Node's HTTP parser refuses (431, 400, 408) gets the one error body too
    clientErrorHandler,
    // router-level failures (bad percent-encoding, over-long parameter) get the one error body
    // too: Fastify's default would echo the whole path, which might hold a secret
    frameworkErrors: (error, _request, reply) => {
      const body = { error: { code: 'invalid_request', message: 'The request URL is malformed', details: { field: 'url' } } };
      void (reply as unknown as FastifyReply).code(error.statusCode ?? 400).send(body);
    },
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // only JSON bodies are ever accepted; anything else is a 415 from the parser
  app.removeContentTypeParser(['text/plain']);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  app.decorate('config', config);
  app.decorate('db', deps.pool);
  const clock = deps.clock ?? systemClock;
  app.decorate('clock', clock);
  app.decorate(
    'jwtVerifier',
    deps.jwtVerifier ?? createJwtVerifier({ jwt: config.jwt, issuer: config.jwtIssuer, audience: config.jwtAudience }),
  );
  app.decorate('tokenRepository', createTokenRepository(deps.pool));
  app.decorate(
    'revocations',
    createRevocationBus(deps.redis?.client ?? null, deps.redis?.subscriber ?? null, config.redisKeyPrefix),
  );
  app.decorate(
    'lastUsed',
    createLastUsedRecorder(deps.pool, (error) => app.log.warn({ err: error }, 'last_used_at flush failed; will retry')),
  );
  app.decorate(
    'tokenAuthenticator',
    createTokenAuthenticator({
      pool: deps.pool,
      clock,
      revocations: app.revocations,
      lastUsed: app.lastUsed,
      onCacheLookup: (hit) => app.metrics.tokenCacheLookups.inc({ result: hit ? 'hit' : 'miss' }),
    }),
  );
  app.decorate('accessControl', createAccessControl(deps.pool));
  app.decorate('rollups', createRollups({ mode: deps.rollupMode ?? 'pool', threads: config.rollupThreads, db: deps.pool, heapLimitMb: config.heapLimitMb }));
  // threads start when the server listens (inject-only tests start them on first use)
  // (not awaited: a shutdown right after start would otherwise log the interrupted warm-up)
  app.addHook('onListen', async () => void app.rollups.warm().catch(() => {}));
  app.addHook('onClose', async () => app.rollups.close());
  app.decorateRequest('apiToken', null as never);
  app.decorateRequest('unitScope', null as never);
  // written behind during the run; flushed on close so no use is lost
  app.addHook('onClose', async () => {
    await app.lastUsed.close();
    await app.revocations.close();
  });
  app.decorateRequest('employee', null as never);

  app.decorate('metrics', createMetrics({ pool: deps.pool, rollupQueueSize: () => app.rollups.queueSize() }));
  app.decorate(
    'rateLimits',
    await registerRateLimits(app, {
      redis: deps.redis?.client ?? null,
      workers: config.workers,
      maxOverrides: deps.rateLimitOverrides,
      onRejected: (scope) => app.metrics.rateLimitRejections.inc({ scope }),
      keyPrefix: `${config.redisKeyPrefix}rl:`,
      onDegraded: (error) => {
        app.metrics.rateLimitFallbacks.inc();
        app.log.error({ err: error }, 'Redis unavailable: rate limits fall back to per-process counting');
      },
      onRecovered: () => app.log.warn('Redis is back: rate limits are shared again'),
    }),
  );
  // routes without their own authentication (unknown paths, the public validate endpoint) are
  // limited by client IP here; authenticated routes count in their auth hooks
  app.addHook('onRequest', async (request, reply) => {
    const scope = request.routeOptions.config.ipRateLimit;
    if (scope) await app.rateLimits.check(scope, request.ip, request, reply);
    else if (request.is404) await app.rateLimits.checkPublic(request, reply);
  });

  registerErrorHandler(app);
  registerMetrics(app, deps.clusterScrape);
  await registerOpenApi(app);

  await app.register(healthRoutes);
  await app.register(apiTokenRoutes, { prefix: '/api/v1/api-tokens' });
  await app.register(dataSurfaceRoutes, { prefix: '/api/v1' });
  await app.register(validateCoolingUserIdRoute);
  return app;
}
