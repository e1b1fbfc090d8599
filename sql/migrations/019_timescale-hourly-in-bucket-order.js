// The timescale profile's hourly aggregate read in bucket order, its materialized part chunk by
// chunk, instead of sorting a whole answer (019_timescale-hourly-in-bucket-order/up.sql beside
// this file says why and how). Nothing to do on the postgres profile, whose hourly view is
// migration 014's.
import { readFileSync } from 'node:fs';

const viewSql = (name) => readFileSync(new URL(`./019_timescale-hourly-in-bucket-order/${name}.sql`, import.meta.url), 'utf8');

async function profile(pgm) {
  const [storage] = await pgm.db.select('SELECT profile FROM sensor_storage');
  return storage?.profile;
}

export async function up(pgm) {
  if ((await profile(pgm)) === 'timescale') pgm.sql(viewSql('up'));
}

export async function down(pgm) {
  if ((await profile(pgm)) === 'timescale') pgm.sql(viewSql('down'));
}
