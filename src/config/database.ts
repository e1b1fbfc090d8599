// PostgreSQL and the sensor store: where the database is (or the embedded one's data directory),
// how the pools reach it (DB_POOLER, deadlines, prepared statements), and the sensor store's
// profile and retention. Also the smaller configurations `npm run migrate` checks on its own.
import { resolve } from 'node:path';
import { z } from 'zod';
import { DEFAULT_QUERY_TIMEOUT_MS, type DbPooler } from '../db/pool.js';
import type { StorageProfile } from '../sensors/store.js';
import { ConfigError, pathKind } from './checks.js';
import { integerText, optionalText, parse, postgresUrlText } from './env.js';

export const databaseVariables = {
  DATABASE_URL: postgresUrlText(),
  DATABASE_READ_URL: postgresUrlText(),
  DATABASE_SESSION_URL: postgresUrlText(),
  DATA_DIR: optionalText,
  DB_POOL_MAX: optionalText.pipe(integerText(1, 200).optional()),
  DB_QUERY_TIMEOUT_MS: optionalText.pipe(integerText(1000, 600_000).optional()),
  DB_STARTUP_WAIT_SECONDS: optionalText.pipe(integerText(0, 3600).optional()),
  DB_PREPARED_STATEMENTS: optionalText.pipe(z.enum(['on', 'off'], { error: 'must be on or off' }).optional()),
  DB_POOLER: optionalText.pipe(
    z
      .enum(['none', 'transaction'], { error: (issue) => `must be none or transaction, not "${String(issue.input).slice(0, 100)}"` })
      .optional(),
  ),
};

export const sensorStorageVariables = {
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
  SENSOR_CHANGES_RETENTION_DAYS: optionalText.pipe(integerText(1, 3660).optional()),
};

type DatabaseEnvironment = z.infer<z.ZodObject<typeof databaseVariables>>;
type SensorStorageEnvironment = z.infer<z.ZodObject<typeof sensorStorageVariables>>;

export interface DatabaseConfig {
  /** null: no DATABASE_URL, so `npm start` runs an embedded PostgreSQL in dataDir */
  databaseUrl: string | null;
  dataDir: string;
  /** A streaming replica for the data endpoints' queries; null: the primary serves them */
  databaseReadUrl: string | null;
  /**
   * A connection that keeps a session (PostgreSQL itself or a session-mode pool), for what needs
   * one: the unit directory's LISTEN and the migrations' lock and settings; null: DATABASE_URL
   */
  databaseSessionUrl: string | null;
  /** what sits between the service and PostgreSQL on DATABASE_URL and DATABASE_READ_URL (src/db/pool.ts) */
  dbPooler: DbPooler;
  dbPoolMax: number;
  /** client-side deadline of a data query (src/db/pool.ts); lookups have a shorter fixed one */
  dbQueryTimeoutMs: number;
  /** how long start-up retries a database it cannot reach before it gives up */
  dbStartupWaitMs: number;
  /** the service's queries as named (prepared) statements; off behind poolers that cannot keep them (default with DB_POOLER=transaction) */
  dbPreparedStatements: boolean;
}

export interface SensorStoreConfig {
  /**
   * The sensor store's profile, chosen once, when migration 003 runs on a new database; null:
   * timescale when the server can create the extension, else postgres.
   */
  sensorStorage: StorageProfile | null;
  /** raw sensor readings older than this many days are dropped (set when 003 runs); null keeps them */
  sensorRetentionDays: number | null;
  /** the change feed keeps changes this many days; a cursor from before is 410 cursor_expired */
  sensorChangesRetentionDays: number;
}

/** What the migrations read besides the database (sql/migrations/003_sensor-store.js). */
export type SensorStorageConfig = Pick<SensorStoreConfig, 'sensorStorage' | 'sensorRetentionDays'>;

const SESSION_REQUIRED =
  "is required with DB_POOLER=transaction: the unit directory's notifications and the migrations' lock need a session, " +
  'which a transaction-mode pooler does not keep (name PostgreSQL itself or a session-mode pool)';

const startupWaitMs = (e: Pick<DatabaseEnvironment, 'DB_STARTUP_WAIT_SECONDS'>) => (e.DB_STARTUP_WAIT_SECONDS ?? 60) * 1000;

/** The embedded mode's data directory, refused early when it cannot be one. */
function dataDirOf(e: DatabaseEnvironment): string {
  const dataDir = resolve(e.DATA_DIR ?? '.data');
  if (!e.DATABASE_URL) {
    // only the embedded mode uses it: a file in its place would fail deep in PostgreSQL's start
    const kind = pathKind(dataDir);
    if (kind === 'unreadable')
      throw new ConfigError('DATA_DIR', `is ${dataDir}, which cannot be reached (permissions, or a file on its path)`);
    if (kind !== 'missing' && kind !== 'directory') throw new ConfigError('DATA_DIR', `is ${dataDir}, which exists and is not a directory`);
  }
  return dataDir;
}

/** The database settings, and the combinations of them that cannot work. */
export function databaseConfigOf(e: DatabaseEnvironment): DatabaseConfig {
  const dataDir = dataDirOf(e);
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
    databaseReadUrl: e.DATABASE_READ_URL ?? null,
    databaseSessionUrl: e.DATABASE_SESSION_URL ?? null,
    dbPooler,
    dbPoolMax: e.DB_POOL_MAX ?? 10,
    dbQueryTimeoutMs: e.DB_QUERY_TIMEOUT_MS ?? DEFAULT_QUERY_TIMEOUT_MS,
    dbStartupWaitMs: startupWaitMs(e),
    // PgBouncer before 1.21 (Debian 12 ships 1.18) cannot keep prepared statements in transaction mode
    dbPreparedStatements: (e.DB_PREPARED_STATEMENTS ?? (dbPooler === 'transaction' ? 'off' : 'on')) === 'on',
  };
}

const sensorStorageOf = (e: Pick<SensorStorageEnvironment, 'SENSOR_STORAGE' | 'SENSOR_RETENTION_DAYS'>): SensorStorageConfig => ({
  sensorStorage: e.SENSOR_STORAGE ?? null,
  sensorRetentionDays: e.SENSOR_RETENTION_DAYS ?? null,
});

export const sensorStoreConfigOf = (e: SensorStorageEnvironment): SensorStoreConfig => ({
  ...sensorStorageOf(e),
  sensorChangesRetentionDays: e.SENSOR_CHANGES_RETENTION_DAYS ?? 30,
});

const { SENSOR_STORAGE, SENSOR_RETENTION_DAYS } = sensorStorageVariables;

/**
 * Only the migrations' settings: `npm run migrate` needs no JWT secret or Redis, so it checks
 * these two (with loadConfig's messages) instead of the whole environment.
 */
export function loadSensorStorageConfig(env: NodeJS.ProcessEnv = process.env): SensorStorageConfig {
  return sensorStorageOf(parse(z.object({ SENSOR_STORAGE, SENSOR_RETENTION_DAYS }), env));
}

/** What `npm run migrate` reads: the sensor settings, the session it migrates on, how long it waits. */
export interface MigrationConfig extends SensorStorageConfig {
  /** DATABASE_SESSION_URL, else null (DATABASE_URL) */
  databaseSessionUrl: string | null;
  /** how long to wait for another migrator's lock (DB_STARTUP_WAIT_SECONDS) */
  lockWaitMs: number;
}

export function loadMigrationConfig(env: NodeJS.ProcessEnv = process.env): MigrationConfig {
  const { DATABASE_SESSION_URL, DB_STARTUP_WAIT_SECONDS } = databaseVariables;
  const e = parse(z.object({ DATABASE_SESSION_URL, DB_STARTUP_WAIT_SECONDS, SENSOR_STORAGE, SENSOR_RETENTION_DAYS }), env);
  return { ...sensorStorageOf(e), databaseSessionUrl: e.DATABASE_SESSION_URL ?? null, lockWaitMs: startupWaitMs(e) };
}
