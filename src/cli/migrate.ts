// `npm run migrate`: apply pending migrations to DATABASE_URL (or to the running npm start's
// embedded database when DATABASE_URL is unset), on DATABASE_SESSION_URL when it is set (the
// migrations need a session: see src/db/migrate.ts), with SENSOR_STORAGE and SENSOR_RETENTION_DAYS
// checked as start-up checks them (src/config.ts); waits up to DB_STARTUP_WAIT_SECONDS for another
// migrator's lock.
import { ConfigError, loadMigrationConfig, type MigrationConfig } from '../config.js';
import { commandDatabase } from '../db/embedded-handoff.js';
import { migrate } from '../db/migrate.js';

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

let config: MigrationConfig;
try {
  config = loadMigrationConfig();
} catch (error) {
  fail(error instanceof ConfigError ? error.message : String(error));
}
const database = commandDatabase('npm run migrate');
if ('problem' in database) fail(database.problem);
const log = (line: string) => console.error(line);
const options = { log, lockWaitMs: config.lockWaitMs };
const applied = await migrate(config.databaseSessionUrl ?? database.url, config, options).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  fail(message.startsWith('Invalid configuration:') ? message : `migrate failed: ${message}`);
});
console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
