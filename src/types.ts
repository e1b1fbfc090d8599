// The Fastify instance type used by every route (zod type provider) and what plugins decorate it with.
import type { ReadRouting } from './db/read-routing.js';
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type pg from 'pg';
import type { Config } from './config.js';
import type { Clock } from './time.js';
import type { JwtVerifier } from './auth/jwt.js';
import type { AccessControl, UnitScope } from './data-surface/authorize.js';
import type { Metrics } from './observability/metrics.js';
import type { RateLimiter, RateLimitScope } from './rate-limit/limits.js';
import type { Rollups } from './analytics/rollups.js';
import type { AuditRepository } from './audit/repository.js';
import type { AuthenticatedToken, TokenAuthenticator } from './tokens/authenticator.js';
import type { LastUsedRecorder } from './tokens/last-used.js';
import type { LeakReportRepository } from './tokens/leak-reports.js';
import type { TokenRepository } from './tokens/repository.js';
import type { RevocationBus } from './tokens/revocation.js';
import type { TokenUsage } from './tokens/usage.js';

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;

export interface Employee {
  userId: number;
  companyId: number;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A public route limited by client IP under this scope (e.g. validate-cooling-user-id). */
    ipRateLimit?: RateLimitScope;
    /** The answer carries a raw token: never compressed (src/plugins/compression.ts). */
    carriesSecret?: boolean;
  }
  interface FastifyInstance {
    config: Config;
    db: pg.Pool;
    /** the data endpoints' page queries: a replica when configured (the primary while it is lost), else the primary */
    readDb: Pick<pg.Pool, 'query'>;
    readRouting: ReadRouting;
    clock: Clock;
    jwtVerifier: JwtVerifier;
    tokenRepository: TokenRepository;
    /** the token audit trail's read side (src/audit/) */
    auditTrail: AuditRepository;
    tokenAuthenticator: TokenAuthenticator;
    revocations: RevocationBus;
    /** leak reports' lookups and their revoke-and-record transaction */
    leakReports: LeakReportRepository;
    lastUsed: LastUsedRecorder;
    /** usage per token, counted in memory and written by the last_used flush; null: not counted */
    tokenUsage: TokenUsage | null;
    accessControl: AccessControl;
    rateLimits: RateLimiter;
    metrics: Metrics;
    rollups: Rollups;
  }
  interface FastifyRequest {
    /** Set by the employee-auth hook on management routes. */
    employee: Employee;
    /** Set by the token-auth hook on data routes. */
    apiToken: AuthenticatedToken;
    /** The units this data request may read, resolved once by the access control. */
    unitScope: UnitScope;
    /** Set once a leak report's signature verified: the identifier of the key that signed it. */
    leakReportSigner?: string;
  }
}
