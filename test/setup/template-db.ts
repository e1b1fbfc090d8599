// tap `before` script: rebuild the migrated template database every test file clones.
import { migrate } from '../../src/db/migrate.js';
import { databaseUrl, templateName, withAdmin } from '../helpers/db.js';

await withAdmin(async (client) => {
  await client.query(`DROP DATABASE IF EXISTS ${templateName} WITH (FORCE)`);
  await client.query(`CREATE DATABASE ${templateName}`);
});
// the plain-PostgreSQL sensor store: the local server has no TimescaleDB, and the timescale
// profile is tested on PGlite (test/helpers/timescale.ts)
process.env.SENSOR_STORAGE = 'postgres';
await migrate(databaseUrl(templateName));
