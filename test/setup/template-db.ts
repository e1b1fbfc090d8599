// tap `before` script: rebuild the migrated templates every test file clones, one per server:
//   - the local PostgreSQL (TEST_DATABASE_ADMIN_URL), with the postgres storage profile;
//   - the TimescaleDB server (TEST_TIMESCALE_URL, default 127.0.0.1:5433; started with
//     ../shared/timescaledb/start.sh when it does not answer), with the timescale profile.
// Templates derived from the local one (db.ts derivedTemplate) are dropped, to be rebuilt.
// First the transpiled copy of the service the tests start as processes (compile.mjs).
import './compile.mjs';
import { dropDerivedTemplates, postgresServer, rebuildTemplate } from '../helpers/db.js';
import { rebuildTimescaleTemplate } from '../helpers/timescale.js';

try {
  // each template is migrated with its server's profile asked for by name (the local template
  // gets postgres even where the server lists TimescaleDB without preloading it); templates
  // derived from the migrated one are built afresh by this run's first file that asks
  await dropDerivedTemplates();
  await rebuildTemplate(postgresServer);
  await rebuildTimescaleTemplate();
} catch (error) {
  console.error(`test templates: ${(error as Error).message}`);
  process.exit(1);
}
