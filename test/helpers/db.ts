// One database per test file, cloned from a migrated template (test/setup/template-db.ts), so
// test files run in parallel against real PostgreSQL without seeing each other's rows.
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPool } from '../../src/db/pool.js';

export const adminUrl = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
// one template per checkout: test runs of two clones on one machine must not drop each other's
export const templateName = `coldtrack_test_template_${createHash('sha256').update(process.cwd()).digest('hex').slice(0, 8)}`;

export function databaseUrl(name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
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

/** A fresh, migrated, empty database for this test file; dropped when the test ends. */
export async function createTestDatabase(t: Teardown): Promise<TestDatabase> {
  const name = `coldtrack_test_${randomBytes(6).toString('hex')}`;
  await withAdmin((client) => client.query(`CREATE DATABASE ${name} TEMPLATE ${templateName}`));
  const url = databaseUrl(name);
  // the service's own pool settings (UTC sessions, timeouts); a connection cut when the database
  // is dropped must not crash the test process
  const pool = createPool(url, 4, () => {});
  t.teardown(async () => {
    await pool.end();
    await withAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  });
  return { name, url, pool };
}
