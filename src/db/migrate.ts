// Applies sql/migrations to a database. Idempotent: node-pg-migrate records what ran, and one lock
// serialises migrators, so concurrent starts (several instances in a rolling deploy, CI) never
// apply a migration twice: the later ones wait for the lock, then find nothing left to apply.
//
// Two connections to the session URL (DATABASE_SESSION_URL, else DATABASE_URL), both closed at the
// end whatever happens:
// - the lock holder keeps one transaction open for the whole run and takes node-pg-migrate's
//   advisory lock in it as a *transaction* lock (pg_advisory_xact_lock). Such a lock cannot outlive
//   its transaction: commit, rollback, a closed connection or a crash end it, and a pooler in
//   between cannot keep it on a server connection (a session lock taken through PgBouncer in
//   transaction mode stayed on an idle pooled connection and hung the next migrate). It still
//   conflicts with the session lock an older version of the service takes, so a rolling deploy
//   across this change stays serialised;
// - the migrator runs the migrations (each its own transaction) with the sensor settings set on its
//   session, so it must be a session: checked first by a notification the lock holder sends it,
//   which a transaction-mode pooler does not deliver.
// Waiting for the lock is bounded and says who holds it; failing to end the lock's transaction is
// said too (closing the connection then ends it). node-pg-migrate's warnings and errors are logged.
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { PG_MIGRATE_LOCK_ID, runner } from 'node-pg-migrate';
import pg from 'pg';
import type { SensorStorageConfig } from '../config.js';
import { CONNECT_TIMEOUT_MS } from './pool.js';
import { checkSession } from './session.js';
import { retryTransient } from './transient.js';
import { isDatabaseUnavailable } from './unavailable.js';

export const migrationsDir = fileURLToPath(new URL('../../sql/migrations', import.meta.url));

// A deadlock with one of TimescaleDB's background jobs: a policy an earlier migration of the same
// run committed starts at once (on a slow machine, while later migrations alter its aggregate or
// job), and PostgreSQL may pick the migration as the victim. Each migration is its own
// transaction, so the victim changed nothing and the next try starts from it.
const MIGRATE_ATTEMPTS = 5;
const MIGRATE_BACKOFF_MS = 200;

const DEFAULT_LOCK_WAIT_MS = 60_000;
/** Waiting longer than this for the lock is said, once, with who holds it. */
const LOCK_WAIT_NOTICE_MS = 1000;
const LOCK_POLL_MS = 250;

export interface MigrateOptions {
  /** warnings and errors (node-pg-migrate's, a wait for the lock, a retry); nothing by default */
  log?: (line: string) => void;
  /** node-pg-migrate's progress lines too ("> Migrating files: ...") */
  verbose?: boolean;
  /** how long to wait for another migrator's lock before giving up (default 60 s) */
  lockWaitMs?: number;
}

/**
 * Applies what is left to apply, with the sensor settings (src/config.ts) for migration 003;
 * returns the names of the migrations this call applied. `sessionUrl`: a connection that keeps a
 * session (PostgreSQL itself, or a session-mode pool).
 */
export async function migrate(
  sessionUrl: string,
  sensor: SensorStorageConfig,
  options: MigrateOptions | ((line: string) => void) = {},
): Promise<string[]> {
  const { log = () => {}, verbose = false, lockWaitMs = DEFAULT_LOCK_WAIT_MS } = typeof options === 'function' ? { log: options } : options;
  const lockHolder = await connect(sessionUrl);
  try {
    const first = await connect(sessionUrl);
    let migrator: pg.Client | null = first;
    try {
      await checkSession(first, lockHolder, 'the migrations');
      await takeLock(lockHolder, lockWaitMs, log);
      const applied: string[] = [];
      await retryTransient(async () => {
        migrator ??= await connect(sessionUrl);
        try {
          applied.push(...await runMigrations(migrator, sensor, log, verbose));
        } finally {
          await migrator.end().catch(() => {});
          migrator = null;
        }
      }, {
        attempts: MIGRATE_ATTEMPTS,
        backoffMs: MIGRATE_BACKOFF_MS,
        onRetry: (error, attempt) => log(`migration try ${attempt} was rolled back (${error.message}); trying again`),
      });
      await releaseLock(lockHolder, log);
      return applied;
    } finally {
      await migrator?.end().catch(() => {});
    }
  } finally {
    // ends the lock's transaction too, if it is still open (a failure above)
    await lockHolder.end().catch(() => {});
  }
}

async function connect(url: string) {
  // without a connect timeout a black-holed server holds start-up silently for minutes;
  // migrations themselves (index builds) get no query deadline
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: 'coldtrack-migrate' });
  // a connection lost mid-run fails the query in flight, which is the error reported
  client.on('error', () => {});
  await client.connect();
  return client;
}

// pg_locks shows a bigint advisory key as its high and low 32 bits
const LOCK_HOLDER = `SELECT a.pid, a.application_name, host(a.client_addr) AS client, a.state, a.state_change
  FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
  WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.classid = ($1::bigint >> 32)::oid AND l.objid = ($1::bigint & 4294967295)::oid AND l.objsubid = 1
  LIMIT 1`;

interface Holder {
  pid: number;
  application_name: string;
  client: string | null;
  state: string | null;
  state_change: Date | null;
}

const describe = (holder: Holder | undefined) => holder
  ? `backend pid ${holder.pid} (application "${holder.application_name}", client ${holder.client ?? 'local'}, ${holder.state ?? 'unknown state'}` +
    `${holder.state_change ? ` since ${holder.state_change.toISOString()}` : ''})`
  : 'a backend that has just let it go';

async function takeLock(client: pg.Client, waitMs: number, log: (line: string) => void) {
  // a server-wide idle_in_transaction_session_timeout would end this transaction, and the lock,
  // while the migrations run on the other connection
  await client.query('BEGIN; SET LOCAL idle_in_transaction_session_timeout = 0; SET LOCAL statement_timeout = 0');
  const started = Date.now();
  let noticed = false;
  for (;;) {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [PG_MIGRATE_LOCK_ID]);
    if (rows[0]!.locked) return;
    const waited = Date.now() - started;
    if (waited >= waitMs || (!noticed && waited >= LOCK_WAIT_NOTICE_MS)) {
      const holder = (await client.query<Holder>(LOCK_HOLDER, [PG_MIGRATE_LOCK_ID])).rows[0];
      if (waited >= waitMs) {
        throw new Error(`the migrations' lock (advisory lock ${PG_MIGRATE_LOCK_ID}) is still held after ${Math.round(waited / 1000)} s by ${describe(holder)}: ` +
          `another migration is running, or a connection left it behind (SELECT pg_terminate_backend(${holder?.pid ?? 'pid'}) ends it)`);
      }
      log(`waiting for the migrations' lock, held by ${describe(holder)}; giving up after ${Math.round(waitMs / 1000)} s`);
      noticed = true;
    }
    await sleep(LOCK_POLL_MS);
  }
}

async function releaseLock(client: pg.Client, log: (line: string) => void) {
  try {
    await client.query('COMMIT');
  } catch (error) {
    // the transaction, and the lock with it, ends when the connection closes (the caller's finally)
    log(`could not end the migrations' lock transaction (${(error as Error).message}); closing its connection releases the lock`);
  }
}

// The sensor settings reach the migrations as settings of the migrating session, which 003 reads
// with current_setting(): a migration file imports nothing from src/ (code that keeps changing,
// while a landed migration never does) and needs no process.env of its own. Set on the session
// rather than as a startup parameter (a connection string's `options`), which poolers refuse.
const SENSOR_SETTINGS = "SELECT set_config('coldtrack.sensor_storage', $1, false), set_config('coldtrack.sensor_retention_days', $2, false)";

async function runMigrations(client: pg.Client, sensor: SensorStorageConfig, log: (line: string) => void, verbose: boolean) {
  await client.query(SENSOR_SETTINGS, [sensor.sensorStorage ?? '', sensor.sensorRetentionDays?.toString() ?? '']);
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
    // the lock is this module's (takeLock), on the other connection
    noLock: true,
    logger: { debug: () => {}, info: verbose ? log : () => {}, warn: log, error: log },
  });
  return applied.map((migration) => migration.name);
}

/**
 * Start-up's migrate: while the database cannot answer (refused, unreachable, hung, starting up),
 * retry with backoff (0.5 s doubling to 5 s), one line per attempt, until `waitMs` has passed;
 * then, or at once for any other failure, throw. The lock is waited for up to `waitMs` too.
 * `check` runs first in each attempt (start-up's check of the connections).
 */
export async function migrateWhenReachable(sessionUrl: string, sensor: SensorStorageConfig, waitMs: number, log: (line: string) => void,
  check: () => Promise<void> = async () => {}) {
  const deadline = Date.now() + waitMs;
  for (let attempt = 1; ; attempt += 1) {
    try {
      await check();
      return await migrate(sessionUrl, sensor, { log, lockWaitMs: Math.max(deadline - Date.now(), 0) });
    } catch (error) {
      const delayMs = Math.min(500 * 2 ** (attempt - 1), 5000);
      if (!isDatabaseUnavailable(error) || Date.now() + delayMs > deadline) throw error;
      log(`database not reachable (attempt ${attempt}: ${(error as Error).message}); retrying in ${delayMs / 1000} s`);
      await sleep(delayMs);
    }
  }
}
