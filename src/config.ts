// Environment -> one typed, validated config. A bad or missing value stops start-up with one
// line naming the variable (docs/contract.md, "Operating contract").
// The one entry point: each concern's variables, defaults and cross-checks live in src/config/
// (database.ts with the sensor store, redis.ts, http.ts, jwt.ts, processes.ts, tokens.ts,
// webhooks.ts, tracing.ts; env.ts and checks.ts are what they are built from); this file joins them.
import { z } from 'zod';
import {
  type DatabaseConfig,
  databaseConfigOf,
  databaseVariables,
  sensorStorageVariables,
  type SensorStoreConfig,
  sensorStoreConfigOf,
} from './config/database.js';
import { parse } from './config/env.js';
import { type HttpConfig, httpConfigOf, httpVariables } from './config/http.js';
import { type JwtSettings, jwtConfigOf, jwtVariables } from './config/jwt.js';
import { type ProcessConfig, processConfigOf, processVariables } from './config/processes.js';
import { type RedisConfig, redisConfigOf, redisVariables } from './config/redis.js';
import { type TokenConfig, tokenConfigOf, tokenVariables } from './config/tokens.js';
import { type TracingConfig, tracingConfigOf, tracingVariables } from './config/tracing.js';
import { webhookSettingsOf, webhookVariables } from './config/webhooks.js';
import type { WebhookSettings } from './webhooks/settings.js';

export { ConfigError, jwtPublicKey } from './config/checks.js';
export { loadMigrationConfig, loadSensorStorageConfig, type MigrationConfig, type SensorStorageConfig } from './config/database.js';
export type { JwtConfig } from './config/jwt.js';
export { heapFlags, mallocEnv } from './config/processes.js';
export type { RedisNode } from './config/redis.js';
export type { TracingSettings } from './config/tracing.js';

export interface Config
  extends DatabaseConfig, SensorStoreConfig, RedisConfig, HttpConfig, JwtSettings, ProcessConfig, TokenConfig, TracingConfig {
  /** sending webhooks (src/webhooks/settings.ts) */
  webhooks: WebhookSettings;
}

const envSchema = z.object({
  ...databaseVariables,
  ...sensorStorageVariables,
  ...redisVariables,
  ...httpVariables,
  ...jwtVariables,
  ...processVariables,
  ...tokenVariables,
  ...webhookVariables,
  ...tracingVariables,
});

/** Every variable loadConfig reads (tests hold a bad value for each). */
export const CONFIG_VARIABLES = Object.keys(envSchema.shape) as Array<keyof typeof envSchema.shape>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const e = parse(envSchema, env);
  const embedded = !e.DATABASE_URL;
  const jwt = jwtConfigOf(e, embedded);
  const database = databaseConfigOf(e);
  const redis = redisConfigOf(e);
  return {
    ...database,
    ...sensorStoreConfigOf(e),
    ...redis,
    ...httpConfigOf(e, embedded),
    ...jwt,
    ...processConfigOf(e, Boolean(redis.redisUrl || redis.redisClusterNodes)),
    ...tokenConfigOf(e),
    webhooks: webhookSettingsOf(e),
    ...tracingConfigOf(e),
  };
}
