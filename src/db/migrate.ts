// Applies sql/migrations to a database. Idempotent: node-pg-migrate records what ran and holds
// an advisory lock, so concurrent starts (several instances in a rolling deploy, CI) never apply a
// migration twice: the later ones wait for the lock, then find nothing left to apply.
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { runner } from 'node-pg-migrate';
import pg from 'pg';
import type { SensorStorageConfig } from '../config.js';
import { CONNECT_TIMEOUT_MS } from './pool.js';
import { retryTransient } from './transient.js';
import { isDatabaseUnavailable } from './unavailable.js';

export const migrationsDir = fileURLToPath(new URL('../../sql/migrations', import.meta.url));

// A deadlock with one of TimescaleDB's background jobs: a policy an earlier migration of the same
// run committed starts at once (on a slow machine, while later migrations alter its aggregate or
// job), and PostgreSQL may pick the migration as the victim. Each migration is its own
// transaction, so the victim changed nothing and the next try starts from it.
const MIGRATE_ATTEMPTS = 5;
const MIGRATE_BACKOFF_MS = 200;

/**
 * Applies what is left to apply, with the sensor settings (src/config.ts) for migration 003;
 * returns the names of the migrations this call applied.
 */
export async function migrate(databaseUrl: string, sensor: SensorStorageConfig, log: (line: string) => void = () => {}): Promise<string[]> {
  const applied: string[] = [];
  await retryTransient(async () => applied.push(...await migrateOnce(databaseUrl, sensor, log)), {
    attempts: MIGRATE_ATTEMPTS,
    backoffMs: MIGRATE_BACKOFF_MS,
    onRetry: (error, attempt) => log(`migration try ${attempt} was rolled back (${error.message}); trying again`),
  });
  return applied;
}

// The sensor settings reach the migrations as settings of the migrating session, which 003 reads
// with current_setting(): a migration file imports nothing from src/ (code that keeps changing,
// while a landed migration never does) and needs no process.env of its own. Set on the session
// rather than as a startup parameter (a connection string's `options`), which poolers refuse.
const SENSOR_SETTINGS = "SELECT set_config('coldtrack.sensor_storage', $1, false), set_config('coldtrack.sensor_retention_days', $2, false)";

async function migrateOnce(databaseUrl: string, sensor: SensorStorageConfig, log: (line: string) => void) {
  // without a connect timeout a black-holed server holds start-up silently for minutes;
  // migrations themselves (index builds) get no query deadline
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // a connection lost mid-run fails the query in flight, which is the error reported
  client.on('error', () => {});
  await client.connect();
  try {
    await client.query(SENSOR_SETTINGS, [sensor.sensorStorage ?? '', sensor.sensorRetentionDays?.toString() ?? '']);
    return await runMigrations(client, log);
  } finally {
    await client.end().catch(() => {});
  }
}

async function runMigrations(client: pg.Client, log: (line: string) => void) {
  const applied = await runner({
    dbClient: client,
    dir: migrationsDir,
    // to node-pg-migrate every file of the folder is a migration but dotfiles and, here, the
    // README (the folder's rule); the folders beside a migration (its SQL) it skips by itself
    ignorePattern: '(\\..*|README\\.md)',
    direction: 'up',
    migrationsTable: 'pgmigrations',
    count: Infinity,
    checkOrder: true,
    // node-pg-migrate's default ('fail') made the second of two instances started together exit
    // with "Another migration is already running"; the lock is a session lock, so a crashed
    // holder releases it and waiting cannot outlive it
    advisoryLockMode: 'wait',
    log,
    logger: { debug: () => {}, info: log, warn: log, error: log },
  });
  return applied.map((migration) => migration.name);
}

/**
 * Start-up's migrate: while the database cannot answer (refused, unreachable, hung, starting up),
 * retry with backoff (0.5 s doubling to 5 s), one line per attempt, until `waitMs` has passed;
 * then, or at once for any other failure, throw.
 */
export async function migrateWhenReachable(databaseUrl: string, sensor: SensorStorageConfig, waitMs: number, log: (line: string) => void) {
  const deadline = Date.now() + waitMs;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await migrate(databaseUrl, sensor);
    } catch (error) {
      const delayMs = Math.min(500 * 2 ** (attempt - 1), 5000);
      if (!isDatabaseUnavailable(error) || Date.now() + delayMs > deadline) throw error;
      log(`database not reachable (attempt ${attempt}: ${(error as Error).message}); retrying in ${delayMs / 1000} s`);
      await sleep(delayMs);
    }
  }
}
