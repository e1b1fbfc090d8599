// The timescale profile's continuous aggregates laid out for reading one unit's history over a
// long window (008_timescale-aggregate-layout/up.sql beside this file: columnstore segmented by
// unit and type, ordered by bucket, compressed a week after a chunk ends; 30-day hourly and
// 90-day daily chunks). For databases migrated before it and new ones alike; nothing to do on the
// postgres profile, whose rollups are compacted by the store's upkeep
// (003_sensor-store/postgres-upkeep.sql).
// Light in the migration's transaction: settings and two policies. Compressing the existing
// chunks is the new policies' first run, in the background.
import { readFileSync } from 'node:fs';

const layoutSql = (name) => readFileSync(new URL(`./008_timescale-aggregate-layout/${name}.sql`, import.meta.url), 'utf8');

async function profile(pgm) {
  const [storage] = await pgm.db.select('SELECT profile FROM sensor_storage');
  return storage?.profile;
}

export async function up(pgm) {
  if ((await profile(pgm)) === 'timescale') pgm.sql(layoutSql('up'));
}

export async function down(pgm) {
  if ((await profile(pgm)) === 'timescale') pgm.sql(layoutSql('down'));
}
