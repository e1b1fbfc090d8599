// Test databases cloned ahead of the files that use them, and dropped after, by a process beside
// tap (test/setup/database-stock.ts, started by test/run.mjs): a clone of the migrated template on
// this machine's PostgreSQL waits seconds for its checkpoints and file syncs (little of it CPU), a
// drop too, and every test file paid both on its own clock. With a stock, a file renames a
// clone nobody has touched to its own name, and at its end renames its database to the trash for
// the stock process to drop. Each clone still serves one file only, exactly as the template made it.
// Used only where the stock process runs (COLDTRACK_TEST_DATABASE_STOCK, set by test/run.mjs),
// for the local server's migrated template; anything else is created and dropped as before.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';

/** The run whose stock process is running, if any (test/run.mjs sets it for tap's test processes). */
export const stockRun = process.env.COLDTRACK_TEST_DATABASE_STOCK || null;

/** The names' first part: per checkout, as the templates are (db.ts checkoutTemplateName). */
export const stockPrefix = (checkout: string) => `coldtrack_stock_${checkout}_`;
export const trashPrefix = (checkout: string) => `coldtrack_trash_${checkout}_`;

/**
 * A stocked clone of `template` renamed to `name`: true, or false when there is none left (the
 * caller clones one itself). A clone's name carries its template's oid, so a clone of a template
 * since rebuilt (another run in this checkout) is never taken.
 */
export async function claimStockedClone(client: pg.Client, checkout: string, template: string, name: string): Promise<boolean> {
  const { rows } = await client.query<{ datname: string }>(
    `SELECT stock.datname FROM pg_database stock JOIN pg_database template ON template.datname = $1 AND template.datistemplate
      WHERE starts_with(stock.datname, $2 || template.oid || '_') ORDER BY random()`,
    [template, stockPrefix(checkout)],
  );
  for (const { datname } of rows) {
    try {
      await client.query(`ALTER DATABASE ${datname} RENAME TO ${name}`);
      return true;
    } catch (error) {
      // another file took it first (or the stock process dropped it as its run ended)
      if ((error as { code?: string }).code !== '3D000') throw error;
    }
  }
  return false;
}

/**
 * `name` moved to the trash, for the stock process to drop: the sessions still in it are ended
 * first, as DROP DATABASE ... WITH (FORCE) would end them.
 */
export async function trashDatabase(client: pg.Client, checkout: string, name: string): Promise<void> {
  await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
  await client.query(`ALTER DATABASE ${name} RENAME TO ${trashPrefix(checkout)}${randomBytes(6).toString('hex')}`);
}
