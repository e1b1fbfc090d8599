// `npm run migrate`: apply pending migrations to DATABASE_URL (or to the running npm start's
// embedded database when DATABASE_URL is unset), with SENSOR_STORAGE and SENSOR_RETENTION_DAYS
// checked as start-up checks them (src/config.ts).
import { ConfigError, loadSensorStorageConfig, type SensorStorageConfig } from '../config.js';
import { commandDatabase } from '../db/embedded-handoff.js';
import { migrate } from '../db/migrate.js';

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

let sensor: SensorStorageConfig;
try {
  sensor = loadSensorStorageConfig();
} catch (error) {
  fail(error instanceof ConfigError ? error.message : String(error));
}
const database = commandDatabase('npm run migrate');
if ('problem' in database) fail(database.problem);
const applied = await migrate(database.url, sensor).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  fail(message.startsWith('Invalid configuration:') ? message : `migrate failed: ${message}`);
});
console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
