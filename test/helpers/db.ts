// One database per test file, cloned from a migrated template (test/setup/template-db.ts), so
// test files run in parallel against real PostgreSQL without seeing each other's rows. Two
// servers: the local PostgreSQL (postgres storage profile) and a TimescaleDB server (timescale
// profile, test/helpers/timescale.ts), each with its own template.
import { createHash, randomBytes } from 'node:crypto';
import { globSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createPool } from '../../src/db/pool.js';
import { retryTransient } from '../../src/db/transient.js';
import type { StorageProfile } from '../../src/sensors/store.js';
import { claimStockedClone, stockRun, trashDatabase } from './database-stock.js';

/** A server test databases are created on, and the template they are cloned from. */
export interface DatabaseServer {
  /** a maintenance database on the server (postgres), as a superuser */
  adminUrl: string;
  templateName: string;
  /** the storage profile the template is migrated with */
  profile: StorageProfile;
}

// one template per checkout: test runs of two clones on one machine must not drop each other's
export const checkout = createHash('sha256').update(process.cwd()).digest('hex').slice(0, 8);

export const adminUrl = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const templateName = `coldtrack_test_template_${checkout}`;

/** The local PostgreSQL. It may list TimescaleDB without preloading it: its template is postgres. */
export const postgresServer: DatabaseServer = { adminUrl, templateName, profile: 'postgres' };

/** A template name for another server, per checkout like the local one. */
export const checkoutTemplateName = (prefix: string) => `${prefix}_${checkout}`;

export function databaseUrl(name: string, server: DatabaseServer = postgresServer): string {
  const url = new URL(server.adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>, server: DatabaseServer = postgresServer): Promise<T> {
  const client = new pg.Client({ connectionString: server.adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  pool: pg.Pool;
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** A new database on `server`, by default empty (not migrated); dropped when the test ends. */
export async function createEmptyDatabase(t: Teardown, server: DatabaseServer = postgresServer, template?: string) {
  const { name, url, drop } = await newDatabase(server, template);
  t.teardown(drop);
  return { name, url };
}

// Another test run in this checkout may be rebuilding the template right now (its tap `before`
// script): a template is cloned only once it is complete (rebuildTemplate marks it IS_TEMPLATE
// last); while it is missing, being built or in use, wait for it.
const TEMPLATE_BUSY = new Set(['3D000', '55006']);
const TEMPLATE_WAIT_MS = 20_000;

async function newDatabase(server: DatabaseServer, template?: string, name = `coldtrack_test_${randomBytes(6).toString('hex')}`) {
  // the local server's clones come from the stock when test/run.mjs keeps one (database-stock.ts)
  const stocked = stockRun !== null && server === postgresServer;
  await withAdmin(async (client) => {
    if (!template) return client.query(`CREATE DATABASE ${name}`);
    if (stocked && template === server.templateName && (await claimStockedClone(client, checkout, template, name))) return;
    for (const deadline = Date.now() + TEMPLATE_WAIT_MS; ; await sleep(250)) {
      const { rows } = await client.query<{ ready: boolean }>('SELECT datistemplate AS ready FROM pg_database WHERE datname = $1', [
        template,
      ]);
      const late = Date.now() > deadline;
      if (!rows[0]?.ready) {
        if (late)
          throw new Error(
            `the template database ${template} is ${rows[0] ? 'not complete' : 'missing'} (it is built by test/setup/template-db.ts, tap's before script)`,
          );
        continue;
      }
      try {
        // FILE_COPY copies the template's files as they are: 0.2 s of CPU a clone against 0.5 s for
        // the default WAL_LOG, which writes every page of it to the WAL (over a hundred clones a run)
        return await client.query(`CREATE DATABASE ${name} TEMPLATE ${template} STRATEGY FILE_COPY`);
      } catch (error) {
        if (late || !TEMPLATE_BUSY.has((error as { code?: string }).code ?? '')) throw error;
      }
    }
  }, server);
  const dropNow = () => withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`), server);
  const drop = stocked ? () => withAdmin((client) => trashDatabase(client, checkout, name)).catch(dropNow) : dropNow;
  return { name, url: databaseUrl(name, server), drop };
}

/**
 * A fresh, migrated database for this test file, empty or cloned from a derived template
 * (derivedTemplate); dropped when the test ends.
 */
export async function createTestDatabase(
  t: Teardown,
  server: DatabaseServer = postgresServer,
  template = server.templateName,
): Promise<TestDatabase> {
  const { name, url, drop } = await newDatabase(server, template);
  // the service's own pool settings (UTC sessions, timeouts); a connection cut when the database
  // is dropped must not crash the test process
  const pool = createPool(url, 4, { onError: () => {} });
  t.teardown(async () => {
    await pool.end();
    await drop();
  });
  return { name, url, pool };
}

// derived templates of this checkout: dropped at the start of every run (dropDerivedTemplates)
const DERIVED_PREFIX = 'coldtrack_derived_';
const derivedName = (label: string) => checkoutTemplateName(`${DERIVED_PREFIX}${label}`);

/**
 * A template on the local server holding the migrated template plus what `fill` puts in: built
 * by the first test file of a run that asks (the others wait on an advisory lock, then find it
 * done) and cloned by each, like the migrated one. For fixtures that cost seconds of CPU to load
 * (a year of readings through the ingest): loaded once a run instead of once a file. `fill` must
 * be deterministic: the files read what it made back by name (ids start at 1 in every clone).
 */
export async function derivedTemplate(label: string, fill: (db: TestDatabase) => Promise<void>): Promise<string> {
  const name = derivedName(label);
  await withAdmin(async (client) => {
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
    try {
      const { rows } = await client.query<{ done: boolean }>('SELECT datistemplate AS done FROM pg_database WHERE datname = $1', [name]);
      if (rows[0]?.done) return;
      // a build that died half-way (its process killed) left a database that is not a template
      if (rows[0]) await client.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await newDatabase(postgresServer, postgresServer.templateName, name);
      const url = databaseUrl(name);
      const pool = createPool(url, 4, { onError: () => {} });
      try {
        await fill({ name, url, pool });
      } finally {
        await pool.end();
      }
      await client.query(`ALTER DATABASE ${name} IS_TEMPLATE true ALLOW_CONNECTIONS false`);
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [name]);
    }
  });
  return name;
}

/** At the start of a run: the derived templates of the last one may hold what older code made. */
export async function dropDerivedTemplates(): Promise<void> {
  await withAdmin(async (client) => {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [derivedName('%')]);
    for (const { datname } of rows) {
      await client.query(`ALTER DATABASE ${datname} IS_TEMPLATE false`);
      await client.query(`DROP DATABASE ${datname} WITH (FORCE)`);
    }
  });
}

/** Runs the migrations on `url` with the sensor storage `profile` (SENSOR_STORAGE) and retention. */
export async function migrateWithProfile(url: string, profile: StorageProfile, sensorRetentionDays: number | null = null): Promise<void> {
  // loaded here, not with this module: node-pg-migrate costs a test process ~0.2 s of CPU to load,
  // and most files only clone a template migrated before the run
  const { migrate } = await import('../../src/db/migrate.js');
  await migrate(url, { sensorStorage: profile, sensorRetentionDays });
}

// What a template is built from: a template whose comment names the same fingerprint is what a
// rebuild would make again, and a run of some files (npm test -- PATH) reuses it
const TEMPLATE_INPUTS = [
  'sql/migrations/**',
  'src/db/migrate.ts',
  'src/sensors/policy-health.ts',
  'test/helpers/db.ts',
  'test/helpers/timescale.ts',
  'package-lock.json',
];

/** A hash of what the templates are built from (TEMPLATE_INPUTS), written into each one's comment. */
export function templateFingerprint(): string {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const hash = createHash('sha256');
  for (const file of TEMPLATE_INPUTS.flatMap((pattern) => globSync(pattern, { cwd: root, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => `${entry.parentPath}/${entry.name}`)
    .sort()) {
    hash.update(file).update(readFileSync(file));
  }
  return `coldtrack template ${hash.digest('hex').slice(0, 16)}`;
}

/** Whether `server`'s template is complete and built from what is checked out now. */
export async function templateIsFresh(server: DatabaseServer): Promise<boolean> {
  const { rows } = await withAdmin(
    (client) =>
      client.query<{ comment: string | null }>(
        "SELECT shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1 AND datistemplate",
        [server.templateName],
      ),
    server,
  );
  return rows[0]?.comment === templateFingerprint();
}

/**
 * Drops and rebuilds `server`'s template: created, migrated with the server's profile, prepared
 * by `prepare` (on a connection that is closed after), then closed: IS_TEMPLATE, ALLOW_CONNECTIONS
 * false and nobody connected. CREATE DATABASE ... TEMPLATE fails while anyone is connected to the
 * template, and on a TimescaleDB server the job scheduler connects to every database that has the
 * extension unless it refuses connections.
 */
export async function rebuildTemplate(server: DatabaseServer, prepare?: (client: pg.Client) => Promise<void>): Promise<void> {
  const where = `template ${server.templateName} on ${new URL(server.adminUrl).host}`;
  // every step starts over from a dropped template, so a deadlock (a TimescaleDB job or the
  // job launcher meeting a step; one failed a CI run before the first test) is simply tried again
  await retryTransient(() => rebuildTemplateOnce(server, prepare), {
    attempts: 4,
    backoffMs: 500,
    onRetry: (error, attempt) => console.error(`${where}: try ${attempt} lost (${error.message}); rebuilding again`),
  }).catch((error: Error) => {
    error.message = `${where}: ${error.message}`;
    throw error;
  });
}

async function rebuildTemplateOnce(server: DatabaseServer, prepare?: (client: pg.Client) => Promise<void>): Promise<void> {
  const name = server.templateName;
  const step = <T>(label: string, work: () => Promise<T>) =>
    work().catch((error: Error) => {
      error.message = `${label}: ${error.message}`;
      throw error;
    });
  await step('drop and create', () =>
    withAdmin(async (client) => {
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      // a template of an earlier run: a template database cannot be dropped
      if (rowCount) await client.query(`ALTER DATABASE ${name} IS_TEMPLATE false ALLOW_CONNECTIONS true`);
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.query(`CREATE DATABASE ${name}`);
    }, server),
  );
  await step('migrate', () => migrateWithProfile(databaseUrl(name, server), server.profile));
  if (prepare) {
    await step('prepare', async () => {
      const client = new pg.Client({ connectionString: databaseUrl(name, server) });
      await client.connect();
      try {
        await prepare(client);
      } finally {
        await client.end();
      }
    });
  }
  await step('close', () =>
    withAdmin(async (client) => {
      await client.query(`ALTER DATABASE ${name} IS_TEMPLATE true ALLOW_CONNECTIONS false`);
      await client.query(`COMMENT ON DATABASE ${name} IS ${client.escapeLiteral(templateFingerprint())}`);
      // sessions already in (TimescaleDB's scheduler) are not turned out by ALLOW_CONNECTIONS false
      for (let attempt = 0; ; attempt++) {
        const { rows } = await client.query<{ n: number }>(
          'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [name],
        );
        if (rows[0]!.n === 0) break;
        if (attempt === 50) throw new Error(`${rows[0]!.n} sessions would not leave`);
        await sleep(100);
      }
    }, server),
  );
}
