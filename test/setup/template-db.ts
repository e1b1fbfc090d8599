// tap `before` script: rebuild the migrated template database every test file clones.
import { migrate } from '../../src/db/migrate.js';
import { databaseUrl, templateName, withAdmin } from '../helpers/db.js';

await withAdmin(async (client) => {
  await client.query(`DROP DATABASE IF EXISTS ${templateName} WITH (FORCE)`);
  await client.query(`CREATE DATABASE ${templateName}`);
});
await migrate(databaseUrl(templateName));
