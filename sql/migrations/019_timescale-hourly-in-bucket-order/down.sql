-- TimescaleDB's own definition of the real-time view again (003_sensor-store/timescale.sql):
-- the same branches, unordered.
DO $migration$
DECLARE
  hourly record;
BEGIN
  SELECT a.mat_hypertable_id AS id, format('%I.%I', h.schema_name, h.table_name) AS materialization
  INTO STRICT hourly
  FROM _timescaledb_catalog.continuous_agg a
  JOIN _timescaledb_catalog.hypertable h ON h.id = a.mat_hypertable_id
  WHERE a.user_view_schema = current_schema() AND a.user_view_name = 'sensor_readings_hourly';

  EXECUTE format($view$
    CREATE OR REPLACE VIEW sensor_readings_hourly AS
    SELECT bucket, cooling_unit_id, specification_type, value, min, max, sample_count
    FROM %1$s
    WHERE bucket < COALESCE(_timescaledb_functions.to_timestamp(_timescaledb_functions.cagg_watermark(%2$s)),
                            '-infinity'::timestamptz)
    UNION ALL
    SELECT time_bucket(INTERVAL '1 hour', recorded_at) AS bucket, cooling_unit_id, specification_type,
           avg(value) AS value, min(value) AS min, max(value) AS max, count(*)::integer AS sample_count
    FROM sensor_readings
    WHERE recorded_at >= COALESCE(_timescaledb_functions.to_timestamp(_timescaledb_functions.cagg_watermark(%2$s)),
                                  '-infinity'::timestamptz)
    GROUP BY 1, 2, 3
  $view$, hourly.materialization, hourly.id);
END
$migration$;
