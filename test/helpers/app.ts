// Builds the real app on a fresh database for one test file, with an injectable clock and a
// captured log stream (so tests can prove a secret never reaches the logs).
import { Writable } from 'node:stream';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { mintEmployeeJwt } from '../../src/auth/jwt.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createRedis, redisReady, redisTarget } from '../../src/redis/connection.js';
import { loggerOptions } from '../../src/logging.js';
import type { Clock } from '../../src/time.js';
import type { RequestTracing } from '../../src/tracing/requests.js';
import type { App } from '../../src/types.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import type pg from 'pg';

export const TEST_JWT_SECRET = 'test-secret-test-secret-test-secret-0123456789';

/** A clock the test moves by hand: expiry is tested to the second without sleeping. */
export class ManualClock implements Clock {
  constructor(private current = new Date()) {}
  now() {
    return new Date(this.current);
  }
  set(date: Date) {
    this.current = new Date(date);
  }
  advance(ms: number) {
    this.current = new Date(this.current.getTime() + ms);
  }
}

export interface TestApp {
  app: App;
  db: TestDatabase;
  clock: ManualClock;
  config: Config;
  /** Every log line the app wrote, raw. */
  logs: string[];
  jwtFor(userId: number, options?: { ttlSeconds?: number; now?: Date }): Promise<string>;
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** Every scope lifted: for tests of anything but the rate limits themselves. */
const LIFTED = {
  public_read: 1e6,
  public_write: 1e6,
  authenticated_read: 1e6,
  authenticated_write: 1e6,
  validate_cooling_user_id_ip: 1e6,
  analytics_api_token: 1e6,
};

export interface TestAppOptions {
  /** Keep the spec's rate limits (tests of the limits); by default they are lifted. */
  realRateLimits?: boolean;
  /** Share another test app's database: a second "process" of the same deployment. */
  database?: TestDatabase;
  /** A pool for the data endpoints' page queries (a read replica); default the test database's. */
  readPool?: pg.Pool;
  /** With realRateLimits: a window shorter than the minute, for tests that wait one out. */
  rateLimitWindowMs?: number;
  /** Tracing on (src/tracing/start.ts, started by the test before the database: its pool is then traced). */
  tracing?: RequestTracing;
}

export async function createTestApp(t: Teardown, env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  const db = options.database ?? (await createTestDatabase(t));
  const config = loadConfig({
    DATABASE_URL: db.url,
    JWT_SECRET: TEST_JWT_SECRET,
    LOG_LEVEL: 'info',
    // a Redis key space per test database: ids repeat across databases, counters must not
    REDIS_KEY_PREFIX: `coldtrack-test-${db.name}:`,
    ...env,
  });
  const clock = new ManualClock();
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const logger = pino(loggerOptions('info'), stream);
  const target = redisTarget(config);
  const redis = target ? { client: createRedis(target, 'test'), subscriber: createRedis(target, 'test-sub') } : null;
  if (redis) await Promise.all([redisReady(redis.client), redisReady(redis.subscriber)]);
  const app = await buildApp({
    config,
    pool: db.pool,
    readPool: options.readPool ?? null,
    clock,
    logger,
    redis,
    rateLimitOverrides: options.realRateLimits ? undefined : LIFTED,
    ...(options.rateLimitWindowMs ? { rateLimitWindowMs: options.rateLimitWindowMs } : {}),
    tracing: options.tracing ?? null,
  });
  t.teardown(async () => {
    await app.close();
    redis?.client.disconnect();
    redis?.subscriber.disconnect();
  });
  return {
    app,
    db,
    clock,
    config,
    logs,
    jwtFor: (userId, options = {}) =>
      mintEmployeeJwt({ secret: TEST_JWT_SECRET, userId, now: options.now ?? clock.now(), ttlSeconds: options.ttlSeconds ?? 3600 }),
  };
}
