// Turns sensor_readings into the time-series store, in one of two profiles chosen here, once:
//   SENSOR_STORAGE=timescale|postgres, or by default timescale when the server can create the
//   timescaledb extension (offered and preloaded), postgres otherwise.
// Each profile's SQL lives beside this file in 003_sensor-store/ (readable on its own, and part of
// this migration: never edited); both expose the same relations (sensor_readings,
// sensor_readings_hourly, sensor_readings_daily) with the same columns, and record the choice in
// sensor_storage. Optional SENSOR_RETENTION_DAYS drops raw readings older than that (the
// aggregates keep their history). Both settings are checked by src/config.ts and reach this
// migration as settings of its session (coldtrack.sensor_storage, coldtrack.sensor_retention_days,
// set by src/db/migrate.ts; unset or empty: the default).
// A JS migration only because the SQL depends on the server; everything runs in the migration's
// transaction (the aggregates are created WITH NO DATA, which TimescaleDB allows there).
import { readFileSync } from 'node:fs';

const PROFILES = ['timescale', 'postgres'];
// each profile's files in 003_sensor-store/, in order
const FILES = { timescale: ['timescale'], postgres: ['postgres', 'postgres-upkeep'] };

const sensorSql = (name) => readFileSync(new URL(`./003_sensor-store/${name}.sql`, import.meta.url), 'utf8');

// src/config.ts has checked both; the checks here hold for any other way of setting them
async function settings(pgm) {
  const [row] = await pgm.db.select(`
    SELECT coalesce(current_setting('coldtrack.sensor_storage', true), '') AS storage,
           coalesce(current_setting('coldtrack.sensor_retention_days', true), '') AS days`);
  return { requested: row.storage || undefined, days: row.days === '' ? null : Number(row.days) };
}

// TimescaleDB can only be created where the server preloads it: a server that merely lists the
// extension (installed package, shared_preload_libraries unchanged: the most common
// misconfiguration) would fail CREATE EXTENSION with "must be preloaded".
const PRELOAD_FIX = "add timescaledb to shared_preload_libraries in postgresql.conf and restart PostgreSQL";

async function timescaleState(pgm) {
  const [row] = await pgm.db.select(`
    SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'timescaledb') AS available,
           EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'timescaledb') AS installed,
           current_setting('shared_preload_libraries') ~ '(^|[,/ "])timescaledb[^,]*($|,)' AS preloaded`);
  if (!row.available) return 'absent';
  return row.installed || row.preloaded ? 'usable' : 'not-preloaded';
}

async function chooseProfile(pgm, requested) {
  if (requested && !PROFILES.includes(requested)) {
    throw new Error(`Invalid configuration: SENSOR_STORAGE must be timescale or postgres, not "${requested}"`);
  }
  if (requested === 'postgres') return requested;
  const state = await timescaleState(pgm);
  if (requested === 'timescale') {
    if (state === 'absent') throw new Error('Invalid configuration: SENSOR_STORAGE=timescale, but this PostgreSQL server does not offer the timescaledb extension (install TimescaleDB, or unset SENSOR_STORAGE)');
    if (state === 'not-preloaded') throw new Error(`Invalid configuration: SENSOR_STORAGE=timescale, but this PostgreSQL server does not preload timescaledb: ${PRELOAD_FIX}`);
    return requested;
  }
  if (state === 'not-preloaded') {
    console.error(`TimescaleDB is installed on this PostgreSQL server but not preloaded, so sensor history uses the postgres storage profile (to use TimescaleDB: ${PRELOAD_FIX}, then migrate a new database)`);
  }
  return state === 'usable' ? 'timescale' : 'postgres';
}

export async function up(pgm) {
  const { requested, days } = await settings(pgm);
  const profile = await chooseProfile(pgm, requested);
  if (days !== null && !(Number.isInteger(days) && days >= 30)) {
    throw new Error('Invalid configuration: SENSOR_RETENTION_DAYS must be a whole number of days, at least 30');
  }
  pgm.sql(sensorSql('common'));
  for (const file of FILES[profile]) pgm.sql(sensorSql(file));
  pgm.sql(`INSERT INTO sensor_storage (profile, retention) VALUES ('${profile}', ${days === null ? 'NULL' : `INTERVAL '${days} days'`})`);
  if (profile === 'timescale' && days !== null) {
    pgm.sql(`SELECT add_retention_policy('sensor_readings', drop_after => INTERVAL '${days} days')`);
  }
}

export async function down(pgm) {
  const rows = await pgm.db.select('SELECT profile FROM sensor_storage');
  const profile = rows[0]?.profile;
  if (!PROFILES.includes(profile)) throw new Error('sensor_storage names no storage profile');
  pgm.sql(sensorSql(`${profile}-down`));
}
