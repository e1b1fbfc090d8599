// The postgres profile's hourly view kept serial: no parallel plan for a query that reads it
// (014_hourly-rollup-serial/up.sql beside this file says why). Nothing to do on the timescale
// profile, where sensor_readings_hourly is a continuous aggregate.
import { readFileSync } from 'node:fs';

const viewSql = (name) => readFileSync(new URL(`./014_hourly-rollup-serial/${name}.sql`, import.meta.url), 'utf8');

async function profile(pgm) {
  const [storage] = await pgm.db.select('SELECT profile FROM sensor_storage');
  return storage?.profile;
}

export async function up(pgm) {
  if ((await profile(pgm)) === 'postgres') pgm.sql(viewSql('up'));
}

export async function down(pgm) {
  if ((await profile(pgm)) === 'postgres') pgm.sql(viewSql('down'));
}
