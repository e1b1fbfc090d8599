// Retention that keeps the aggregates' history on the timescale profile. TimescaleDB logs the
// range of every chunk a retention policy drops as changed, and a refresh policy with no
// start_offset (003) re-materializes every changed range however old: the buckets of the dropped
// readings would be recomputed from nothing, so the aggregates would lose the history that
// retention is meant to keep. With retention, the refresh windows end a day short of it.
// sensor_timescale_retention(days) sets both sides together (also for operators changing it).
// The postgres profile's rollups are never recomputed from raw readings: nothing to do there.
const RETENTION_FUNCTION = `
CREATE FUNCTION sensor_timescale_retention(days integer) RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  IF days < 30 THEN RAISE EXCEPTION 'retention must be at least 30 days, not %', days; END IF;
  PERFORM remove_retention_policy('sensor_readings', if_exists => true);
  PERFORM add_retention_policy('sensor_readings', drop_after => make_interval(days => days));
  PERFORM remove_continuous_aggregate_policy('sensor_readings_hourly', if_exists => true);
  PERFORM add_continuous_aggregate_policy('sensor_readings_hourly', start_offset => make_interval(days => days - 1),
    end_offset => INTERVAL '1 hour', schedule_interval => INTERVAL '15 minutes');
  PERFORM remove_continuous_aggregate_policy('sensor_readings_daily', if_exists => true);
  PERFORM add_continuous_aggregate_policy('sensor_readings_daily', start_offset => make_interval(days => days - 1),
    end_offset => INTERVAL '1 day', schedule_interval => INTERVAL '1 hour');
  UPDATE sensor_storage SET retention = make_interval(days => days);
END
$fn$`;

export async function up(pgm) {
  const [storage] = await pgm.db.select('SELECT profile, extract(day FROM retention)::int AS days FROM sensor_storage');
  if (storage?.profile !== 'timescale') return;
  pgm.sql(RETENTION_FUNCTION);
  if (storage.days !== null) pgm.sql(`SELECT sensor_timescale_retention(${Number(storage.days)})`);
}

export async function down(pgm) {
  pgm.sql('DROP FUNCTION IF EXISTS sensor_timescale_retention(integer)');
}
