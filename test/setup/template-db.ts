// tap `before` script: rebuild the migrated templates every test file clones, one per server:
//   - the local PostgreSQL (TEST_DATABASE_ADMIN_URL), with the postgres storage profile;
//   - the TimescaleDB server (TEST_TIMESCALE_URL, default 127.0.0.1:5433; started with
//     ../shared/timescaledb/start.sh when it does not answer), with the timescale profile.
// Templates derived from the local one (db.ts derivedTemplate) are dropped, to be rebuilt.
// First the transpiled copy of the service the tests start as processes (compile.mjs).
// test/run.mjs, running some files only, names the templates they need (--only=postgres,timescale)
// and keeps those built from what is checked out now (--reuse-fresh: db.ts templateIsFresh).
import { parseArgs } from 'node:util';
import './compile.mjs';
import { dropDerivedTemplates, postgresServer, rebuildTemplate, templateIsFresh } from '../helpers/db.js';
import { rebuildTimescaleTemplate, timescaleServer } from '../helpers/timescale.js';

const { values } = parseArgs({ options: { only: { type: 'string' }, 'reuse-fresh': { type: 'boolean', default: false } } });
const wanted = new Set(values.only === undefined ? ['postgres', 'timescale'] : values.only.split(',').filter(Boolean));
/** Whether the template must be built: wanted, and not one to reuse. A server that does not answer is rebuilt (and started). */
const mustBuild = async (name: string, server: typeof postgresServer) =>
  wanted.has(name) && !(values['reuse-fresh'] && (await templateIsFresh(server).catch(() => false)));

try {
  // each template is migrated with its server's profile asked for by name (the local template
  // gets postgres even where the server lists TimescaleDB without preloading it); templates
  // derived from the migrated one are built afresh by this run's first file that asks
  if (wanted.has('postgres')) await dropDerivedTemplates();
  if (await mustBuild('postgres', postgresServer)) await rebuildTemplate(postgresServer);
  if (await mustBuild('timescale', timescaleServer)) await rebuildTimescaleTemplate();
} catch (error) {
  console.error(`test templates: ${(error as Error).message}`);
  process.exit(1);
}
