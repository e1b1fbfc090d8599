// API tokens as a service: the repository (management routes), leak reports' repository, the
// revocation bus (Redis fan-out), the last_used_at write-behind and the authenticator the data
// surface calls.
import fp from 'fastify-plugin';
import type { RedisClient } from '../redis/connection.js';
import { createTokenAuthenticator, type AuthenticatedToken, type TokenAuthenticator } from '../tokens/authenticator.js';
import { createLastUsedRecorder, type LastUsedRecorder } from '../tokens/last-used.js';
import { createLeakReportRepository, type LeakReportRepository } from '../tokens/leak-reports.js';
import { createTokenRepository, type TokenRepository } from '../tokens/repository.js';
import { createRevocationBus, type RevocationBus } from '../tokens/revocation.js';
import { createTokenUsage, type TokenUsage } from '../tokens/usage.js';
import type { App } from '../types.js';

declare module 'fastify' {
  interface FastifyInstance {
    tokenRepository: TokenRepository;
    tokenAuthenticator: TokenAuthenticator;
    revocations: RevocationBus;
    /** leak reports' lookups and their revoke-and-record transaction */
    leakReports: LeakReportRepository;
    lastUsed: LastUsedRecorder;
    /** usage per token, counted in memory and written by the last_used flush; null: not counted */
    tokenUsage: TokenUsage | null;
  }
  interface FastifyRequest {
    /** Set by the token-auth hook on data routes. */
    apiToken: AuthenticatedToken;
  }
}

export interface TokenPluginOptions {
  /** shared state across processes; null when this process is alone */
  redis: { client: RedisClient; subscriber: RedisClient } | null;
  /** false: no usage per token is counted (the P1 benchmark's comparison); default true */
  countUsage?: boolean;
}

async function tokens(app: App, options: TokenPluginOptions) {
  const { db, clock, config } = app;
  app.decorate('tokenRepository', createTokenRepository(db));
  app.decorate('leakReports', createLeakReportRepository(db));
  app.decorate('revocations', createRevocationBus(options.redis?.client ?? null, options.redis?.subscriber ?? null, config.redisKeyPrefix));
  app.decorate('tokenUsage', options.countUsage === false ? null : createTokenUsage(db, clock));
  app.decorate(
    'lastUsed',
    createLastUsedRecorder(
      db,
      config.lastUsedFlushMs,
      (error, what) => {
        (what === 'usage' ? app.metrics.tokenUsageFlushFailures : app.metrics.lastUsedFlushFailures).inc();
        app.log.warn({ err: error }, `${what === 'usage' ? 'token usage' : 'last_used_at'} flush failed; will retry`);
      },
      app.tokenUsage,
    ),
  );
  app.decorate(
    'tokenAuthenticator',
    createTokenAuthenticator({
      pool: db,
      clock,
      revocations: app.revocations,
      lastUsed: app.lastUsed,
      onCacheLookup: (hit) => app.metrics.tokenCacheLookups.inc({ result: hit ? 'hit' : 'miss' }),
    }),
  );
  app.decorateRequest('apiToken', null as never);
  // uses are written behind during the run and flushed on close, so none is lost
  app.addHook('onClose', async () => {
    await app.lastUsed.close();
    await app.revocations.close();
  });
}

export default fp(tokens, { name: 'tokens', dependencies: ['clock', 'config', 'database', 'metrics'] });
