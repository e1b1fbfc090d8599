// `npm run schema-snapshots`: rewrites test/db/schema-snapshots/ from fresh databases migrated by
// the migrations of this checkout. Only for a migration added on purpose: the snapshots are what
// test/db/frozen-migrations.test.ts holds every landed migration to.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { migrate } from '../../src/db/migrate.js';
import { createEmptyDatabase } from '../helpers/db.js';
import { schemaSnapshot, SNAPSHOT_CASES, snapshotFile } from '../helpers/schema-snapshot.js';
import { ensureTimescaleServer } from '../helpers/timescale.js';

await ensureTimescaleServer();
for (const { name, server, settings } of SNAPSHOT_CASES) {
  const drops: Array<() => unknown> = [];
  try {
    const { url } = await createEmptyDatabase({ teardown: (drop) => drops.push(drop) }, server);
    await migrate(url, settings);
    writeFileSync(snapshotFile(name), await schemaSnapshot(url));
    console.log(`wrote ${fileURLToPath(snapshotFile(name))}`);
  } finally {
    for (const drop of drops) await drop();
  }
}
