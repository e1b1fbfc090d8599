// Builds the real app on a fresh database for one test file, with an injectable clock and a
// captured log stream (so tests can prove a secret never reaches the logs).
import { Writable } from 'node:stream';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { mintEmployeeJwt } from '../../src/auth/jwt.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createRedis, redisReady } from '../../src/db/redis.js';
import { loggerOptions } from '../../src/logging.js';
import type { App, Clock } from '../../src/types.js';
import { createTestDatabase, type TestDatabase } from './db.js';

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

export async function createTestApp(t: Teardown, env: Record<string, string> = {}): Promise<TestApp> {
  const db = await createTestDatabase(t);
  const config = loadConfig({ DATABASE_URL: db.url, JWT_SECRET: TEST_JWT_SECRET, LOG_LEVEL: 'info', ...env });
  const clock = new ManualClock();
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const logger = pino(loggerOptions('info'), stream);
  const redis = config.redisUrl
    ? { client: createRedis(config.redisUrl, 'test'), subscriber: createRedis(config.redisUrl, 'test-sub') }
    : null;
  if (redis) await Promise.all([redisReady(redis.client), redisReady(redis.subscriber)]);
  const app = await buildApp({ config, pool: db.pool, clock, logger, redis });
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
