// The timescale storage profile's tests run on a real TimescaleDB server (2.28.3 on PostgreSQL 15,
// ../shared/timescaledb/start.sh), at TEST_TIMESCALE_URL or 127.0.0.1:5433. Like the local
// PostgreSQL, each test file gets a database cloned from a template migrated once per run
// (test/setup/template-db.ts), here with SENSOR_STORAGE=timescale.
//
// The template's sensor policies (aggregate refresh, compression, retention) are paused: the
// tests' clock is a ManualClock in March 2026 while the server's now() is real, so a policy
// running by schedule would materialize or compress at a moment no test chose. The tests run the
// policies themselves (CALL run_job, test/sensors/timescale-jobs.test.ts); a database migrated
// from scratch has them scheduled.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { pauseSensorPolicies, SENSOR_POLICY_JOBS, timescaleUnsupported } from '../../src/sensors/policy-health.js';
import { checkoutTemplateName, createTestDatabase, rebuildTemplate, type DatabaseServer, type TestDatabase } from './db.js';

export const timescaleAdminUrl = process.env.TEST_TIMESCALE_URL ?? 'postgres://postgres@127.0.0.1:5433/postgres';

export const timescaleServer: DatabaseServer = {
  adminUrl: timescaleAdminUrl,
  templateName: checkoutTemplateName('coldtrack_test_ts_template'),
  profile: 'timescale',
};

/**
 * The procedures of the policies migrations 003 (timescale.sql) and 008 (the aggregates'
 * columnstore policies are policy_compression jobs too) and SENSOR_RETENTION_DAYS add.
 */
export const SENSOR_POLICY_PROCS = [...new Set(SENSOR_POLICY_JOBS.map((policy) => policy.proc))];

/** The script that starts the machine's TimescaleDB cluster (README.md beside it). */
export const startScript = fileURLToPath(new URL('../../../shared/timescaledb/start.sh', import.meta.url));

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** A fresh database with the timescale profile, cloned from the template; dropped when the test ends. */
export function createTimescaleDatabase(t: Teardown): Promise<TestDatabase> {
  return createTestDatabase(t, timescaleServer);
}

/** Why the server cannot serve the timescale profile, or null when it can. */
async function unusable(): Promise<string | null> {
  const client = new pg.Client({ connectionString: timescaleAdminUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
  } catch (error) {
    return `does not answer (${(error as Error).message})`;
  }
  try {
    return await timescaleUnsupported(client);
  } finally {
    await client.end();
  }
}

/**
 * Makes sure the TimescaleDB server answers: when it does not, and it is meant to run on this
 * machine (a loopback URL) and ../shared/timescaledb/start.sh exists, runs the script. Throws one
 * clear message otherwise.
 */
export async function ensureTimescaleServer(): Promise<void> {
  const problem = await unusable();
  if (problem === null) return;
  const url = new URL(timescaleAdminUrl);
  const local = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  const where = `the TimescaleDB server for the timescale profile's tests (${timescaleAdminUrl}, set TEST_TIMESCALE_URL to use another)`;
  if (!problem.startsWith('does not answer') || !local || !existsSync(startScript)) {
    throw new Error(
      `${where} ${problem}` + (problem.startsWith('does not answer') && local ? `, and there is no ${startScript} to start it` : ''),
    );
  }
  try {
    execFileSync('bash', [startScript], {
      env: { ...process.env, TIMESCALE_PORT: url.port || '5432' },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 170_000,
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: Buffer; stderr?: Buffer };
    const said = `${stdout ?? ''}${stderr ?? ''}`.trim().split('\n').slice(-3).join(' / ');
    throw new Error(`${where} ${problem}, and ${startScript} failed: ${said || (error as Error).message}`, { cause: error });
  }
  const after = await unusable();
  if (after !== null) throw new Error(`${where} ${after}, even after ${startScript}`);
}

/** test/setup/template-db.ts: the TimescaleDB server up, its template rebuilt with the policies paused. */
export async function rebuildTimescaleTemplate(): Promise<void> {
  await ensureTimescaleServer();
  await rebuildTemplate(timescaleServer, async (client) => {
    // refresh hourly and daily, compression of the readings, columnstore of both aggregates (008)
    if ((await pauseSensorPolicies(client)) < 5) throw new Error('the timescale template has fewer than 5 sensor policies');
  });
}
