// buildApp(): composes the service, and only composes: the Fastify instance's options, then the
// plugins that own each service (src/plugins/), then the routes. No listening and no process
// handling here (see main.ts and http-server.ts).
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyReply, type FastifyServerOptions, type RawRequestDefaultExpression } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { RedisClient } from './redis/connection.js';
import type pg from 'pg';
import type { RollupMode } from './analytics/rollups.js';
import type { JwtVerifier } from './auth/jwt.js';
import type { Config } from './config.js';
import { clientErrorHandler } from './http/client-errors.js';
import { normaliseForwardedFor } from './http/forwarded-for.js';
import { loggerOptions } from './logging.js';
import audit from './plugins/audit.js';
import clock from './plugins/clock.js';
import compression from './plugins/compression.js';
import configPlugin from './plugins/config.js';
import database from './plugins/database.js';
import employeeAuth from './plugins/employee-auth.js';
import errorHandler from './plugins/error-handler.js';
import httpConventions from './plugins/http.js';
import metrics from './plugins/metrics.js';
import openApi from './plugins/openapi.js';
import rateLimits from './plugins/rate-limits.js';
import rollups from './plugins/rollups.js';
import sensorStore from './plugins/sensor-store.js';
import tokens from './plugins/tokens.js';
import webhooks from './plugins/webhooks.js';
import accessControl from './plugins/access-control.js';
import type { RateLimitScope } from './rate-limit/limits.js';
import apiTokenRoutes from './routes/api-tokens/index.js';
import auditEventRoutes from './routes/audit-events/index.js';
import consoleRoutes from './routes/console.js';
import coolingUnitRoutes from './routes/cooling-units.js';
import dataSurfaceRoutes from './routes/data-surface.js';
import healthRoutes from './routes/health.js';
import meRoute from './routes/me.js';
import metricsRoute, { type ClusterScrape } from './routes/metrics.js';
import tokenLeakRoutes from './routes/token-leaks/index.js';
import validateCoolingUserIdRoute from './routes/users/validate-cooling-user-id.js';
import webhookEndpointRoutes from './routes/webhook-endpoints/index.js';
import type { Clock } from './time.js';
import type { RequestTracing } from './tracing/requests.js';
import type { App } from './types.js';

export interface AppDependencies {
  config: Config;
  pool: pg.Pool;
  /** A streaming replica's pool for the data endpoints' queries (default: the primary's). */
  readPool?: pg.Pool | null;
  clock?: Clock;
  /** Overrides the logger built from config.logLevel (tests capture logs through a stream). */
  logger?: FastifyServerOptions['loggerInstance'];
  jwtVerifier?: JwtVerifier;
  /** Shared state across processes (revocations; rate limits). Null: this process is alone. */
  redis?: { client: RedisClient; subscriber: RedisClient } | null;
  /** Revenue/impact rollups on worker threads (default) or inline on the event loop (benchmarks). */
  rollupMode?: RollupMode;
  /** Tests only: lift rate limits that a test of something else would trip over. */
  rateLimitOverrides?: Partial<Record<RateLimitScope, number>>;
  /** Tests only: a shorter window than the spec's minute, for tests that wait one out. */
  rateLimitWindowMs?: number;
  /** In a cluster worker: /metrics answers with the whole cluster's metrics. */
  clusterScrape?: ClusterScrape | undefined;
  /** false: no usage per token is counted; only the P1 benchmark's comparison turns it off (default true). */
  countTokenUsage?: boolean;
  /** Tracing on (src/tracing/start.ts): the request spans; null or absent, nothing of OpenTelemetry is registered. */
  tracing?: RequestTracing | null;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

export async function buildApp(deps: AppDependencies): Promise<App> {
  const { config, tracing } = deps;
  const trustsProxies = config.trustProxy.length > 0;

  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: loggerOptions(config.logLevel) }),
    trustProxy: trustsProxies ? config.trustProxy : false,
    // X-Forwarded-For is cleaned here because rewriteUrl is the one hook Fastify calls with the raw
    // request before anything reads request.ip: before routing, the rate-limit hooks and the
    // "incoming request" log line. proxy-addr would otherwise hand back any junk entry as the
    // client IP (src/http/forwarded-for.ts). With tracing on, a traceparent from a peer outside
    // TRUST_PROXY is dropped here too, before the request's span reads it (src/tracing/requests.ts).
    // The URL itself is returned unchanged.
    ...(trustsProxies || tracing
      ? {
          rewriteUrl: (request: RawRequestDefaultExpression) => {
            if (trustsProxies) normaliseForwardedFor(request);
            tracing?.dropUntrustedContext(request);
            return request.url!;
          },
        }
      : {}),
    // with tracing on, the "incoming request" line is written once the request's trace id is known
    ...(tracing ? { logController: tracing.logController } : {}),
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

  // the request's span first, so that every hook and route runs inside it
  if (tracing) await app.register(tracing.plugin);
  // services, each owned by its plugin (src/plugins/)
  await app.register(httpConventions);
  await app.register(compression);
  await app.register(configPlugin, { config });
  await app.register(database, { pool: deps.pool, readPool: deps.readPool });
  await app.register(clock, { clock: deps.clock });
  await app.register(metrics);
  await app.register(errorHandler);
  await app.register(rateLimits, {
    redis: deps.redis?.client ?? null,
    overrides: deps.rateLimitOverrides,
    windowMs: deps.rateLimitWindowMs,
  });
  await app.register(employeeAuth, { jwtVerifier: deps.jwtVerifier });
  await app.register(tokens, { redis: deps.redis ?? null, countUsage: deps.countTokenUsage });
  await app.register(audit);
  await app.register(accessControl);
  await app.register(rollups, { mode: deps.rollupMode });
  await app.register(sensorStore);
  await app.register(webhooks);
  await app.register(openApi);

  // routes
  await app.register(metricsRoute, { clusterScrape: deps.clusterScrape });
  await app.register(healthRoutes);
  await app.register(apiTokenRoutes, { prefix: '/api/v1/api-tokens' });
  await app.register(auditEventRoutes, { prefix: '/api/v1/audit-events' });
  await app.register(tokenLeakRoutes, { prefix: '/api/v1/token-leaks' });
  await app.register(webhookEndpointRoutes, { prefix: '/api/v1/webhook-endpoints' });
  await app.register(meRoute, { prefix: '/api/v1/me' });
  await app.register(coolingUnitRoutes, { prefix: '/api/v1/cooling-units' });
  await app.register(consoleRoutes);
  await app.register(dataSurfaceRoutes, { prefix: '/api/v1' });
  await app.register(validateCoolingUserIdRoute);
  return app;
}
