// Applies sql/migrations to a database. Idempotent: node-pg-migrate records what ran and holds
// an advisory lock, so concurrent starts (cluster workers, CI) never apply a migration twice.
import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';

export const migrationsDir = fileURLToPath(new URL('../../sql/migrations', import.meta.url));

export async function migrate(databaseUrl: string, log: (line: string) => void = () => {}) {
  const applied = await runner({
    databaseUrl,
    dir: migrationsDir,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    count: Infinity,
    checkOrder: true,
    log,
    logger: { debug: () => {}, info: log, warn: log, error: log },
  });
  return applied.map((migration) => migration.name);
}
