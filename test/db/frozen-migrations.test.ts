// Migrations are frozen: a fresh database built by sql/migrations today equals the snapshot in
// test/db/schema-snapshots/ (taken from the migrations as they landed), for the postgres profile
// on the local PostgreSQL and the timescale profile, with and without retention, on TimescaleDB.
// The snapshot is the schema as pg_dump writes it plus the rows and TimescaleDB catalog entries a
// dump leaves out (test/helpers/schema-snapshot.ts). A difference means a landed migration, or a
// file it reads, was edited; or a new migration was added, whose snapshot is then refreshed on
// purpose with `npm run schema-snapshots`.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { migrate } from '../../src/db/migrate.js';
import { createEmptyDatabase } from '../helpers/db.js';
import { renumberInternalTables, schemaSnapshot, SNAPSHOT_CASES, snapshotFile } from '../helpers/schema-snapshot.js';

for (const { name, server, settings } of SNAPSHOT_CASES) {
  t.test(`${name}: a fresh database equals test/db/schema-snapshots/${name}.sql`, async (t) => {
    const { url } = await createEmptyDatabase(t, server);
    await migrate(url, settings);
    const expected = readFileSync(snapshotFile(name), 'utf8');
    t.equal(
      await schemaSnapshot(url),
      expected,
      'unchanged (a landed migration is never edited; after adding a new migration: npm run schema-snapshots, and commit the snapshots)',
    );
  });
}

t.test("TimescaleDB's internal tables are compared by their order, not their catalog ids", async (t) => {
  const dump = (a: number, b: number, m: number) =>
    `_compressed_hypertable_${b} (); _compressed_hypertable_${a} (); FROM _materialized_hypertable_${m}`;
  t.equal(
    renumberInternalTables(dump(5, 6, 2)),
    '_compressed_hypertable_<2> (); _compressed_hypertable_<1> (); FROM _materialized_hypertable_<1>',
  );
  t.equal(renumberInternalTables(dump(6, 7, 3)), renumberInternalTables(dump(5, 6, 2)), 'ids shifted by a retried statement');
  t.equal(renumberInternalTables(dump(9, 10, 2)), renumberInternalTables(dump(5, 6, 2)), 'ids ordered as numbers');
  t.not(renumberInternalTables(dump(6, 5, 2)), renumberInternalTables(dump(5, 6, 2)), 'which table is which still counts');
});
