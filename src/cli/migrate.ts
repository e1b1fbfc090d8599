// `npm run migrate`: apply pending migrations to DATABASE_URL (or to the running npm start's
// embedded database when DATABASE_URL is unset).
import { commandDatabase } from '../db/embedded-handoff.js';
import { migrate } from '../db/migrate.js';

const database = commandDatabase('npm run migrate');
if ('problem' in database) {
  console.error(database.problem);
  process.exit(1);
}
const databaseUrl = database.url;
const applied = await migrate(databaseUrl, () => {}).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  console.error(message.startsWith('Invalid configuration:') ? message : `migrate failed: ${message}`);
  process.exit(1);
});
console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
