// Environment -> one typed, validated config. A bad or missing value stops start-up with one
// line naming the variable (decisions.md, "Operating contract").
import { availableParallelism } from 'node:os';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { z } from 'zod';

export type JwtConfig =
  | { kind: 'secret'; secret: string }
  | { kind: 'public-key'; pem: string };

export interface Config {
  /** null: no DATABASE_URL, so `npm start` runs an embedded PostgreSQL in dataDir */
  databaseUrl: string | null;
  dataDir: string;
  redisUrl: string | null;
  /** Prefix of every Redis key and channel: deployments may share one Redis. */
  redisKeyPrefix: string;
  host: string;
  port: number;
  workers: number;
  /** null only in embedded mode, where start-up creates and keeps a secret in dataDir */
  jwt: JwtConfig | null;
  jwtIssuer: string | null;
  jwtAudience: string | null;
  trustProxy: string[];
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  dbPoolMax: number;
  rollupThreads: number;
  /** V8 old-space limit of each cluster worker and rollup thread, in MB (see heapFlags) */
  heapLimitMb: number;
}

export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
  }
}

const optionalText = z
  .string()
  .trim()
  .transform((value) => (value === '' ? undefined : value))
  .optional();

const integerText = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));

const proxyEntry = (entry: string) => {
  const [address, bits, ...rest] = entry.split('/');
  if (rest.length > 0 || !address || isIP(address) === 0) return false;
  if (bits === undefined) return true;
  const max = isIP(address) === 4 ? 32 : 128;
  return /^\d+$/.test(bits) && Number(bits) <= max;
};

const envSchema = z.object({
  DATABASE_URL: optionalText.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .optional(),
  ),
  REDIS_URL: optionalText.pipe(
    z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL').optional(),
  ),
  REDIS_KEY_PREFIX: optionalText.pipe(
    z.string().regex(/^[\w:.-]{1,64}$/, 'must be 1..64 letters, digits, ":", ".", "_" or "-"').optional(),
  ),
  DATA_DIR: optionalText,
  HOST: optionalText,
  PORT: optionalText.pipe(integerText(0, 65535).optional()),
  WORKERS: optionalText.pipe(integerText(1, 64).optional()),
  JWT_SECRET: optionalText.pipe(
    z.string().min(32, 'must be at least 32 characters (256 bits for HS256)').optional(),
  ),
  JWT_PUBLIC_KEY: optionalText.pipe(
    z
      .string()
      .transform((pem) => pem.replace(/\\n/g, '\n'))
      .pipe(z.string().regex(/-----BEGIN PUBLIC KEY-----/, 'must be a PEM "PUBLIC KEY" (SPKI)'))
      .optional(),
  ),
  JWT_ISSUER: optionalText,
  JWT_AUDIENCE: optionalText,
  TRUST_PROXY: optionalText.pipe(
    z
      .string()
      .transform((list) => list.split(',').map((entry) => entry.trim()).filter(Boolean))
      .pipe(
        z.array(z.string().refine(proxyEntry, 'must be a comma-separated list of IPs or CIDRs')),
      )
      .optional(),
  ),
  LOG_LEVEL: optionalText.pipe(
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional(),
  ),
  DB_POOL_MAX: optionalText.pipe(integerText(1, 200).optional()),
  ROLLUP_THREADS: optionalText.pipe(integerText(1, 64).optional()),
  HEAP_LIMIT_MB: optionalText.pipe(integerText(128, 65_536).optional()),
});

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(String(issue.path[0] ?? 'environment'), issue.message);
  }
  const e = parsed.data;

  if (e.JWT_SECRET && e.JWT_PUBLIC_KEY) {
    throw new ConfigError('JWT_PUBLIC_KEY', 'cannot be combined with JWT_SECRET: set one of them');
  }
  const jwt: JwtConfig | null = e.JWT_SECRET
    ? { kind: 'secret', secret: e.JWT_SECRET }
    : e.JWT_PUBLIC_KEY
      ? { kind: 'public-key', pem: e.JWT_PUBLIC_KEY }
      : null;
  if (e.DATABASE_URL && !jwt) {
    throw new ConfigError('JWT_SECRET', 'is required (or JWT_PUBLIC_KEY) when DATABASE_URL is set');
  }

  const redisUrl = e.REDIS_URL ?? null;
  const workers = e.WORKERS ?? (redisUrl ? availableParallelism() : 1);
  if (workers > 1 && !redisUrl) {
    throw new ConfigError(
      'WORKERS',
      `is ${workers} but REDIS_URL is not set: rate limits can only be shared across workers through Redis`,
    );
  }

  return {
    databaseUrl: e.DATABASE_URL ?? null,
    dataDir: resolve(e.DATA_DIR ?? '.data'),
    redisUrl,
    redisKeyPrefix: e.REDIS_KEY_PREFIX ?? 'coldtrack:',
    host: e.HOST ?? (e.DATABASE_URL ? '0.0.0.0' : '127.0.0.1'),
    port: e.PORT ?? 3000,
    workers,
    jwt,
    jwtIssuer: e.JWT_ISSUER ?? null,
    jwtAudience: e.JWT_AUDIENCE ?? null,
    trustProxy: e.TRUST_PROXY ?? [],
    logLevel: e.LOG_LEVEL ?? 'info',
    dbPoolMax: e.DB_POOL_MAX ?? 10,
    // every worker has its own pool: share the spare cores among them instead of oversubscribing
    rollupThreads: e.ROLLUP_THREADS ?? Math.max(1, Math.floor((availableParallelism() - 1) / workers)),
    heapLimitMb: e.HEAP_LIMIT_MB ?? 512,
  };
}

/**
 * V8 flags for a cluster worker. Why: V8 sizes the next collection from the heap limit, letting
 * the heap grow to ~4x the live data under the default multi-GB limit; heavy pages make megabytes
 * of short-lived strings, so a worker sat at 300-400 MB RSS holding ~40 MB of live data. A 512 MB
 * limit makes V8 collect at ~1.5x the live data, and 8 MB semi-spaces (default 16) halve the young
 * generation; throughput was unchanged in bench/ (heavy pages 17.5/s either way). A flag the
 * operator already set (NODE_OPTIONS or the node command line) is left alone.
 */
export function heapFlags(heapLimitMb: number, alreadySet: string): string[] {
  const flags: string[] = [];
  if (!/--max-old-space-size\b/.test(alreadySet)) flags.push(`--max-old-space-size=${heapLimitMb}`);
  if (!/--max-semi-space-size\b/.test(alreadySet)) flags.push('--max-semi-space-size=8');
  return flags;
}
