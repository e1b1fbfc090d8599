// Environment -> one typed, validated config. A bad or missing value stops start-up with one
// line naming the variable (docs/contract.md, "Operating contract").
import { parseAllowedNetworks } from './webhooks/address-policy.js';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from './webhooks/settings.js';
import { availableParallelism } from 'node:os';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { z } from 'zod';
import {
  ConfigError,
  connectionUrlProblem,
  HOST_NAME,
  jwtPublicKey,
  LOG_LEVELS,
  pathKind,
  proxyEntry,
  publicBaseUrl,
  stringOrUri,
} from './config-checks.js';
import { DEFAULT_QUERY_TIMEOUT_MS, type DbPooler } from './db/pool.js';
import type { StorageProfile } from './sensors/store.js';
import { type LeakReportKey, leakReportKeys } from './tokens/leak-report-keys.js';

export type JwtConfig = { kind: 'secret'; secret: string } | { kind: 'public-key'; pem: string };

export interface Config {
  /** null: no DATABASE_URL, so `npm start` runs an embedded PostgreSQL in dataDir */
  databaseUrl: string | null;
  dataDir: string;
  redisUrl: string | null;
  /** A Redis Cluster instead of REDIS_URL: its seed nodes */
  redisClusterNodes: RedisNode[] | null;
  /** A streaming replica for the data endpoints' queries; null: the primary serves them */
  databaseReadUrl: string | null;
  /**
   * A connection that keeps a session (PostgreSQL itself or a session-mode pool), for what needs
   * one: the unit directory's LISTEN and the migrations' lock and settings; null: DATABASE_URL
   */
  databaseSessionUrl: string | null;
  /** what sits between the service and PostgreSQL on DATABASE_URL and DATABASE_READ_URL (src/db/pool.ts) */
  dbPooler: DbPooler;
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
  /** where partners reach the API: the OpenAPI document's `servers` entry ("/": its own origin) */
  publicBaseUrl: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  dbPoolMax: number;
  /** client-side deadline of a data query (src/db/pool.ts); lookups have a shorter fixed one */
  dbQueryTimeoutMs: number;
  /** how long start-up retries a database it cannot reach before it gives up */
  dbStartupWaitMs: number;
  /** the service's queries as named (prepared) statements; off behind poolers that cannot keep them (default with DB_POOLER=transaction) */
  dbPreparedStatements: boolean;
  /** how often a worker writes the last_used_at of the tokens it served (src/tokens/last-used.ts) */
  lastUsedFlushMs: number;
  rollupThreads: number;
  /** V8 old-space limit of each cluster worker and rollup thread, in MB (see heapFlags) */
  heapLimitMb: number;
  /**
   * The sensor store's profile, chosen once, when migration 003 runs on a new database; null:
   * timescale when the server can create the extension, else postgres.
   */
  sensorStorage: StorageProfile | null;
  /** raw sensor readings older than this many days are dropped (set when 003 runs); null keeps them */
  sensorRetentionDays: number | null;
  /** the keys a leak report (POST /api/v1/token-leaks) must be signed with; null: the endpoint is off (404) */
  leakReportKeys: LeakReportKey[] | null;
  /** the change feed keeps changes this many days; a cursor from before is 410 cursor_expired */
  sensorChangesRetentionDays: number;
  /** sending webhooks (src/webhooks/settings.ts) */
  webhooks: WebhookSettings;
  /** usage per token counted (src/tokens/usage.ts); false only where the bench measures what counting costs (P1) */
  countTokenUsage: boolean;
}

/** What the migrations read besides the database (sql/migrations/003_sensor-store.js). */
export type SensorStorageConfig = Pick<Config, 'sensorStorage' | 'sensorRetentionDays'>;

export interface RedisNode {
  host: string;
  port: number;
}

export { ConfigError, jwtPublicKey } from './config-checks.js';

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

const envSchema = z.object({
  DATABASE_URL: optionalText.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .superRefine((value, ctx) => {
        const problem = connectionUrlProblem(value, 'pg');
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
  ),
  DATABASE_READ_URL: optionalText.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .superRefine((value, ctx) => {
        const problem = connectionUrlProblem(value, 'pg');
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
  ),
  DATABASE_SESSION_URL: optionalText.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .superRefine((value, ctx) => {
        const problem = connectionUrlProblem(value, 'pg');
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
  ),
  REDIS_URL: optionalText.pipe(
    z
      .string()
      .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
      .superRefine((value, ctx) => {
        const problem = connectionUrlProblem(value, 'ioredis');
        if (problem) return ctx.addIssue({ code: 'custom', message: problem });
        // ioredis reads the database number from the path
        if (!/^\/?(\d{1,2})?$/.test(new URL(value).pathname)) {
          ctx.addIssue({ code: 'custom', message: 'must name a database number as its path, if any (redis://host:6379/0)' });
        }
      })
      .optional(),
  ),
  REDIS_CLUSTER_NODES: optionalText.pipe(
    z
      .string()
      .transform((list) => list.split(',').map((node) => node.trim()))
      .superRefine((nodes, ctx) => {
        for (const node of nodes) {
          const match = /^(.+):(\d{1,5})$/.exec(node);
          const host = match?.[1]?.replace(/^\[(.*)\]$/, '$1') ?? '';
          if (!match || (isIP(host) === 0 && !HOST_NAME.test(host)) || Number(match[2]) < 1 || Number(match[2]) > 65535) {
            ctx.addIssue({
              code: 'custom',
              message: `must be a comma-separated list of host:port (e.g. 10.0.0.1:7000,10.0.0.2:7000), not "${node.slice(0, 100)}"`,
            });
            return;
          }
        }
      })
      .transform((nodes) =>
        nodes.map((node) => {
          const at = node.lastIndexOf(':');
          return { host: node.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(node.slice(at + 1)) };
        }),
      )
      .optional(),
  ),
  REDIS_KEY_PREFIX: optionalText.pipe(
    z
      .string()
      .regex(/^[\w:.-]{1,64}$/, 'must be 1..64 letters, digits, ":", ".", "_" or "-"')
      .optional(),
  ),
  DATA_DIR: optionalText,
  HOST: optionalText.pipe(
    z
      .string()
      .refine(
        (host) => isIP(host) !== 0 || HOST_NAME.test(host),
        'must be an IP address or a host name (e.g. 0.0.0.0, ::, localhost), without brackets or port',
      )
      .optional(),
  ),
  PORT: optionalText.pipe(integerText(0, 65535).optional()),
  WORKERS: optionalText.pipe(integerText(1, 64).optional()),
  JWT_SECRET: optionalText.pipe(z.string().min(32, 'must be at least 32 characters (256 bits for HS256)').optional()),
  // checked further by jwtPublicKey() below: the text is only the first gate
  JWT_PUBLIC_KEY: optionalText.pipe(
    z
      .string()
      .transform((pem) => pem.replace(/\\n/g, '\n'))
      .optional(),
  ),
  JWT_ISSUER: optionalText.pipe(
    z.string().refine(stringOrUri, 'must be the "iss" value: printable text, a URI if it has a ":" (at most 1024 characters)').optional(),
  ),
  JWT_AUDIENCE: optionalText.pipe(
    z.string().refine(stringOrUri, 'must be the "aud" value: printable text, a URI if it has a ":" (at most 1024 characters)').optional(),
  ),
  TRUST_PROXY: optionalText.pipe(
    z
      .string()
      .transform((list) =>
        list
          .split(',')
          .map((entry) => entry.trim())
          .filter(Boolean),
      )
      .pipe(
        z
          .array(z.string().refine(proxyEntry, 'must be a comma-separated list of IPs or CIDRs (prefix length 1 or more)'))
          .min(1, 'must be a comma-separated list of IPs or CIDRs'),
      )
      .optional(),
  ),
  PUBLIC_BASE_URL: optionalText.pipe(
    z
      .string()
      .transform((value, ctx) => {
        const normalised = publicBaseUrl(value);
        if (normalised === null) {
          ctx.addIssue({
            code: 'custom',
            message:
              'must be an http:// or https:// URL without credentials, query or fragment, or a path starting with / (e.g. https://api.coldtrack.example)',
          });
          return z.NEVER;
        }
        return normalised;
      })
      .optional(),
  ),
  LOG_LEVEL: optionalText.pipe(z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).optional()),
  DB_POOL_MAX: optionalText.pipe(integerText(1, 200).optional()),
  DB_QUERY_TIMEOUT_MS: optionalText.pipe(integerText(1000, 600_000).optional()),
  DB_STARTUP_WAIT_SECONDS: optionalText.pipe(integerText(0, 3600).optional()),
  DB_PREPARED_STATEMENTS: optionalText.pipe(z.enum(['on', 'off'], { error: 'must be on or off' }).optional()),
  DB_POOLER: optionalText.pipe(
    z
      .enum(['none', 'transaction'], { error: (issue) => `must be none or transaction, not "${String(issue.input).slice(0, 100)}"` })
      .optional(),
  ),
  LAST_USED_FLUSH_SECONDS: optionalText.pipe(integerText(1, 3600).optional()),
  ROLLUP_THREADS: optionalText.pipe(integerText(1, 64).optional()),
  HEAP_LIMIT_MB: optionalText.pipe(integerText(128, 65_536).optional()),
  SENSOR_STORAGE: optionalText.pipe(
    z
      .enum(['timescale', 'postgres'], { error: (issue) => `must be timescale or postgres, not "${String(issue.input).slice(0, 100)}"` })
      .optional(),
  ),
  SENSOR_RETENTION_DAYS: optionalText.pipe(
    z
      .string()
      .regex(/^\d+$/, 'must be a whole number of days, at least 30')
      .transform(Number)
      .pipe(z.number().min(30, 'must be a whole number of days, at least 30').max(36_500, 'must be at most 36500 (100 years)'))
      .optional(),
  ),
  // checked further by leakReportKeys() below: JSON with PEM keys in it
  LEAK_REPORT_PUBLIC_KEYS: optionalText,
  SENSOR_CHANGES_RETENTION_DAYS: optionalText.pipe(integerText(1, 3660).optional()),
  WEBHOOK_DELIVERY: optionalText.pipe(z.enum(['on', 'off'], { error: 'must be on or off' }).optional()),
  WEBHOOK_ALLOWED_NETWORKS: optionalText.pipe(
    z
      .string()
      .transform((text, ctx) => {
        const networks = parseAllowedNetworks(text);
        if ('problem' in networks) {
          ctx.addIssue({ code: 'custom', message: networks.problem });
          return z.NEVER;
        }
        return networks;
      })
      .optional(),
  ),
  WEBHOOK_TIMEOUT_SECONDS: optionalText.pipe(integerText(1, 60).optional()),
  WEBHOOK_CONCURRENCY: optionalText.pipe(integerText(1, 256).optional()),
  // set by bench/kit/usage-overhead.ts for the server it compares P1 against
  COLDTRACK_BENCH_WITHOUT_TOKEN_USAGE: optionalText.pipe(
    z.enum(['0', '1'], { error: 'must be 1 (usage per token not counted) or 0' }).optional(),
  ),
});

type Environment = z.infer<typeof envSchema>;

const SESSION_REQUIRED =
  "is required with DB_POOLER=transaction: the unit directory's notifications and the migrations' lock need a session, " +
  'which a transaction-mode pooler does not keep (name PostgreSQL itself or a session-mode pool)';

/** Every variable loadConfig reads (tests hold a bad value for each). */
export const CONFIG_VARIABLES = Object.keys(envSchema.shape) as Array<keyof typeof envSchema.shape>;

/** The schema's (or a part's) values, or a ConfigError naming the first bad variable. */
function parse<T>(schema: z.ZodType<T>, env: NodeJS.ProcessEnv): T {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(String(issue.path[0] ?? 'environment'), issue.message);
  }
  return parsed.data;
}

const sensorStorageOf = (e: Pick<Environment, 'SENSOR_STORAGE' | 'SENSOR_RETENTION_DAYS'>): SensorStorageConfig => ({
  sensorStorage: e.SENSOR_STORAGE ?? null,
  sensorRetentionDays: e.SENSOR_RETENTION_DAYS ?? null,
});

/**
 * Only the migrations' settings: `npm run migrate` needs no JWT secret or Redis, so it checks
 * these two (with loadConfig's messages) instead of the whole environment.
 */
export function loadSensorStorageConfig(env: NodeJS.ProcessEnv = process.env): SensorStorageConfig {
  return sensorStorageOf(parse(envSchema.pick({ SENSOR_STORAGE: true, SENSOR_RETENTION_DAYS: true }), env));
}

/** What `npm run migrate` reads: the sensor settings, the session it migrates on, how long it waits. */
export interface MigrationConfig extends SensorStorageConfig {
  /** DATABASE_SESSION_URL, else null (DATABASE_URL) */
  databaseSessionUrl: string | null;
  /** how long to wait for another migrator's lock (DB_STARTUP_WAIT_SECONDS) */
  lockWaitMs: number;
}

export function loadMigrationConfig(env: NodeJS.ProcessEnv = process.env): MigrationConfig {
  const read = { SENSOR_STORAGE: true, SENSOR_RETENTION_DAYS: true, DATABASE_SESSION_URL: true, DB_STARTUP_WAIT_SECONDS: true } as const;
  const e = parse(envSchema.pick(read), env);
  return {
    ...sensorStorageOf(e),
    databaseSessionUrl: e.DATABASE_SESSION_URL ?? null,
    lockWaitMs: (e.DB_STARTUP_WAIT_SECONDS ?? 60) * 1000,
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const e = parse(envSchema, env);

  if (e.JWT_SECRET && e.JWT_PUBLIC_KEY) {
    throw new ConfigError('JWT_PUBLIC_KEY', 'cannot be combined with JWT_SECRET: set one of them');
  }
  const jwt: JwtConfig | null = e.JWT_SECRET
    ? { kind: 'secret', secret: e.JWT_SECRET }
    : e.JWT_PUBLIC_KEY
      ? { kind: 'public-key', pem: jwtPublicKey(e.JWT_PUBLIC_KEY).pem }
      : null;
  if (e.DATABASE_URL && !jwt) {
    throw new ConfigError('JWT_SECRET', 'is required (or JWT_PUBLIC_KEY) when DATABASE_URL is set');
  }

  const dataDir = resolve(e.DATA_DIR ?? '.data');
  if (!e.DATABASE_URL) {
    // only the embedded mode uses it: a file in its place would fail deep in PostgreSQL's start
    const kind = pathKind(dataDir);
    if (kind === 'unreadable')
      throw new ConfigError('DATA_DIR', `is ${dataDir}, which cannot be reached (permissions, or a file on its path)`);
    if (kind !== 'missing' && kind !== 'directory') throw new ConfigError('DATA_DIR', `is ${dataDir}, which exists and is not a directory`);
  }

  const redisUrl = e.REDIS_URL ?? null;
  const redisClusterNodes = e.REDIS_CLUSTER_NODES ?? null;
  if (redisUrl && redisClusterNodes) throw new ConfigError('REDIS_CLUSTER_NODES', 'cannot be combined with REDIS_URL: set one of them');
  const workers = e.WORKERS ?? (redisUrl || redisClusterNodes ? availableParallelism() : 1);
  if (workers > 1 && !redisUrl && !redisClusterNodes) {
    throw new ConfigError(
      'WORKERS',
      `is ${workers} but REDIS_URL is not set (nor REDIS_CLUSTER_NODES): rate limits can only be shared across workers through Redis`,
    );
  }
  if (e.DATABASE_READ_URL && !e.DATABASE_URL) {
    throw new ConfigError('DATABASE_READ_URL', 'needs DATABASE_URL: the replica serves reads of the primary DATABASE_URL names');
  }
  if (e.DATABASE_SESSION_URL && !e.DATABASE_URL) {
    throw new ConfigError('DATABASE_SESSION_URL', 'needs DATABASE_URL: it names a session on the database DATABASE_URL names');
  }
  const dbPooler = e.DB_POOLER ?? 'none';
  if (dbPooler === 'transaction' && !e.DATABASE_URL) {
    throw new ConfigError('DB_POOLER', 'is transaction but DATABASE_URL is not set: the embedded PostgreSQL has no pooler');
  }
  if (dbPooler === 'transaction' && !e.DATABASE_SESSION_URL) {
    throw new ConfigError('DATABASE_SESSION_URL', SESSION_REQUIRED);
  }

  return {
    databaseUrl: e.DATABASE_URL ?? null,
    dataDir,
    redisUrl,
    redisClusterNodes,
    databaseReadUrl: e.DATABASE_READ_URL ?? null,
    databaseSessionUrl: e.DATABASE_SESSION_URL ?? null,
    dbPooler,
    redisKeyPrefix: e.REDIS_KEY_PREFIX ?? 'coldtrack:',
    host: e.HOST ?? (e.DATABASE_URL ? '0.0.0.0' : '127.0.0.1'),
    port: e.PORT ?? 3000,
    workers,
    jwt,
    jwtIssuer: e.JWT_ISSUER ?? null,
    jwtAudience: e.JWT_AUDIENCE ?? null,
    trustProxy: e.TRUST_PROXY ?? [],
    publicBaseUrl: e.PUBLIC_BASE_URL ?? '/',
    logLevel: e.LOG_LEVEL ?? 'info',
    dbPoolMax: e.DB_POOL_MAX ?? 10,
    dbQueryTimeoutMs: e.DB_QUERY_TIMEOUT_MS ?? DEFAULT_QUERY_TIMEOUT_MS,
    dbStartupWaitMs: (e.DB_STARTUP_WAIT_SECONDS ?? 60) * 1000,
    // PgBouncer before 1.21 (Debian 12 ships 1.18) cannot keep prepared statements in transaction mode
    dbPreparedStatements: (e.DB_PREPARED_STATEMENTS ?? (dbPooler === 'transaction' ? 'off' : 'on')) === 'on',
    lastUsedFlushMs: (e.LAST_USED_FLUSH_SECONDS ?? 30) * 1000,
    // every worker has its own pool: share the spare cores among them instead of oversubscribing
    rollupThreads: e.ROLLUP_THREADS ?? Math.max(1, Math.floor((availableParallelism() - 1) / workers)),
    heapLimitMb: e.HEAP_LIMIT_MB ?? 512,
    sensorChangesRetentionDays: e.SENSOR_CHANGES_RETENTION_DAYS ?? 30,
    ...sensorStorageOf(e),
    leakReportKeys: e.LEAK_REPORT_PUBLIC_KEYS ? leakReportKeys(e.LEAK_REPORT_PUBLIC_KEYS) : null,
    webhooks: {
      ...DEFAULT_WEBHOOK_SETTINGS,
      deliver: (e.WEBHOOK_DELIVERY ?? 'on') === 'on',
      allowedNetworks: e.WEBHOOK_ALLOWED_NETWORKS ?? [],
      timeoutMs: (e.WEBHOOK_TIMEOUT_SECONDS ?? DEFAULT_WEBHOOK_SETTINGS.timeoutMs / 1000) * 1000,
      concurrency: e.WEBHOOK_CONCURRENCY ?? DEFAULT_WEBHOOK_SETTINGS.concurrency,
    },
    countTokenUsage: e.COLDTRACK_BENCH_WITHOUT_TOKEN_USAGE !== '1',
  };
}

/**
 * V8 flags for a cluster worker. Why: V8 sizes the next collection from the heap limit, letting
 * the heap grow to several times the live data under the default multi-GB limit; heavy pages make
 * megabytes of short-lived strings, so a worker's RSS grew far past what it held live. A 512 MB
 * limit makes V8 collect much closer to the live data, and 8 MB semi-spaces (default 16) halve the
 * young generation, at the same throughput (docs/benchmarks.md, "HEAP_LIMIT_MB (512) and 8 MB
 * semi-spaces", names the run that compares them).
 * No allocation-site pretenuring: V8 starts allocating a site's objects directly in the old
 * generation once enough of them survive a scavenge, and a request's objects do survive one
 * while it waits on Redis and PostgreSQL, then die right after; pretenured they became old-space
 * garbage, and the mark-compactor ran often on every worker under the warm-token load. Without it
 * fewer mark-compacts ran and P1's p99 came down (docs/benchmarks.md, "No allocation-site
 * pretenuring").
 * A flag the operator already set (NODE_OPTIONS or the node command line) is left alone.
 */
export function heapFlags(heapLimitMb: number, alreadySet: string): string[] {
  const flags: string[] = [];
  if (!/--max-old-space-size\b/.test(alreadySet)) flags.push(`--max-old-space-size=${heapLimitMb}`);
  if (!/--max-semi-space-size\b/.test(alreadySet)) flags.push('--max-semi-space-size=8');
  if (!/--(no-)?allocation-site-pretenuring\b/.test(alreadySet)) flags.push('--no-allocation-site-pretenuring');
  return flags;
}

/**
 * glibc settings for a cluster worker's environment (glibc reads them when the process starts).
 * Why: a large page's buffers (hundreds of KB to MBs) are mmapped and given back to the system
 * when freed, but glibc then raises its mmap threshold to the size just freed, so the next ones
 * come from the heap and stay in the worker's RSS after they are freed. A fixed 128 KB threshold
 * keeps giving them back, which lowers each worker's peak RSS at the same pages per second
 * (`npm run bench -- --only large-pages` measures it: P8). A value the operator already set is
 * left alone.
 */
export function mallocEnv(alreadySet: NodeJS.ProcessEnv): Record<string, string> {
  return alreadySet.MALLOC_MMAP_THRESHOLD_ === undefined ? { MALLOC_MMAP_THRESHOLD_: '131072' } : {};
}
