// buildApp(): composes the service. External plugins first, then the services the routes use,
// then the routes. No listening and no process handling here (see server.ts).
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyServerOptions } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type pg from 'pg';
import { createJwtVerifier, type JwtVerifier } from './auth/jwt.js';
import type { Config } from './config.js';
import { loggerOptions } from './logging.js';
import { registerErrorHandler } from './plugins/error-handler.js';
import { registerOpenApi } from './plugins/openapi.js';
import apiTokenRoutes from './routes/api-tokens/index.js';
import healthRoutes from './routes/health.js';
import { createTokenRepository } from './tokens/repository.js';
import { systemClock, type App, type Clock } from './types.js';

export interface AppDependencies {
  config: Config;
  pool: pg.Pool;
  clock?: Clock;
  /** Overrides the logger built from config.logLevel (tests capture logs through a stream). */
  logger?: FastifyServerOptions['loggerInstance'];
  jwtVerifier?: JwtVerifier;
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
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { maxParamLength: 200 },
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
  app.decorate('clock', deps.clock ?? systemClock);
  app.decorate(
    'jwtVerifier',
    deps.jwtVerifier ?? createJwtVerifier({ jwt: config.jwt, issuer: config.jwtIssuer, audience: config.jwtAudience }),
  );
  app.decorate('tokenRepository', createTokenRepository(deps.pool));
  app.decorateRequest('employee', null as never);

  registerErrorHandler(app);
  await registerOpenApi(app);

  await app.register(healthRoutes);
  await app.register(apiTokenRoutes, { prefix: '/api/v1/api-tokens' });
  return app;
}
