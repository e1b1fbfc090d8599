// Start-up's check of DATABASE_URL (and DATABASE_READ_URL) as the pools will connect, before any
// of them is used: a pooler that refuses or drops the connections' settings stops start-up with one
// line naming the setting to change, instead of every request answering 503 (PgBouncer refuses
// start-up parameters it does not know) or every statement losing its server-side deadline (the
// same parameters dropped by its ignore_startup_parameters). Unreachable databases are not this
// check's business: their errors are thrown as they are, for start-up to retry.
import pg from 'pg';
import type { Config } from '../config.js';
import { connectionSettings, type DbPooler } from './pool.js';

const POOLER_HINT =
  'behind a transaction-mode pooler such as PgBouncer set DB_POOLER=transaction and DATABASE_SESSION_URL (docs/operations.md, "PgBouncer")';

export class ConnectionCheckError extends Error {
  override name = 'ConnectionCheckError';
}

interface Observed {
  statement_timeout_ms: number;
  time_zone: string;
  jit: string;
  database: string;
}

const OBSERVED = `SELECT (SELECT setting::int FROM pg_settings WHERE name = 'statement_timeout') AS statement_timeout_ms,
  current_setting('TimeZone') AS time_zone, current_setting('jit') AS jit, quote_ident(current_database()) AS database`;

/** Connects to `url` as a pool of `pooler` would and checks the session it gets; null when it is fine, else the warning to log. */
async function checkOne(variable: string, url: string, queryTimeoutMs: number, pooler: DbPooler): Promise<string | null> {
  const { config } = connectionSettings(url, queryTimeoutMs, pooler);
  const { onConnect, ...clientConfig } = config;
  const client = new pg.Client(clientConfig);
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    const { code, message } = error as { code?: string; message?: string };
    if (code === '08P01' && /unsupported startup parameter/.test(message ?? '')) {
      throw new ConnectionCheckError(`${variable} refused the connections' start-up parameters ("${message}"): ${POOLER_HINT}`);
    }
    throw error;
  }
  try {
    await onConnect?.(client);
    const observed = (await client.query<Observed>(OBSERVED)).rows[0]!;
    if (pooler === 'transaction') {
      // statements outside a transaction run under the database's own settings there
      return observed.jit === 'on'
        ? `${variable}: jit is on for the service's statements outside a transaction (DB_POOLER=transaction turns it off per transaction only); ` +
            `ALTER DATABASE ${observed.database} SET jit = off turns it off for them (docs/operations.md, "PgBouncer")`
        : null;
    }
    const expected = (config as { statement_timeout: number }).statement_timeout;
    if (observed.statement_timeout_ms !== expected || observed.time_zone !== 'UTC') {
      throw new ConnectionCheckError(
        `${variable}'s connections lost their start-up parameters (statement_timeout ${observed.statement_timeout_ms} ms, not ${expected}; ` +
          `TimeZone ${observed.time_zone}, not UTC): a pooler drops them (PgBouncer's ignore_startup_parameters); ${POOLER_HINT}`,
      );
    }
    return null;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Checks DATABASE_URL, then DATABASE_READ_URL unless the replica cannot be reached now (the
 * service starts without it and reads from the primary). Warnings go to `log`.
 */
export async function checkConnections(config: Config, log: (line: string) => void): Promise<void> {
  const warning = await checkOne('DATABASE_URL', config.databaseUrl!, config.dbQueryTimeoutMs, config.dbPooler);
  if (warning) log(warning);
  if (config.databaseReadUrl) {
    try {
      const replicaWarning = await checkOne('DATABASE_READ_URL', config.databaseReadUrl, config.dbQueryTimeoutMs, config.dbPooler);
      if (replicaWarning) log(replicaWarning);
    } catch (error) {
      if (error instanceof ConnectionCheckError) throw error;
    }
  }
}
