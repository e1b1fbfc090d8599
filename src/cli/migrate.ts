// `npm run migrate`: apply pending migrations to DATABASE_URL.
import { migrate } from '../db/migrate.js';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error('Invalid configuration: DATABASE_URL is required for npm run migrate');
  process.exit(1);
}
const applied = await migrate(databaseUrl, () => {});
console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
