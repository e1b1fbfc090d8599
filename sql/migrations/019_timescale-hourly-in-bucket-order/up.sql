-- The timescale profile's hourly aggregate read in bucket order without sorting its whole answer.
--
-- sensor_readings_hourly is a real-time continuous aggregate: its view is a UNION ALL of the
-- materialization hypertable below the watermark and the readings bucketed at query time above it
-- (003_sensor-store/timescale.sql). Every read of it orders by bucket first
-- (sql/queries/sensor-data.sql, sensor-bulk.sql), but TimescaleDB reads a hypertable's chunks in
-- time order (ordered append) only when the hypertable is a query's own relation, not a branch of a
-- union; and it pushes an ORDER BY into the branches of a real-time aggregate only from
-- PostgreSQL 16 on, and only for an ORDER BY of the bucket alone. So on PostgreSQL 15 the view
-- returned its rows unordered and the query sorted all of them: one unit's hourly year, 17,520
-- rows, in one sort above 13 chunks.
--
-- The view is rewritten as the same two branches, each ordered by bucket: the materialized rows
-- come chunk by chunk in bucket order (each compressed chunk merges its batches, already ordered
-- by bucket), the few buckets above the watermark are grouped in bucket order, and a query merges
-- the two inputs and orders each bucket's few rows by its other keys (an incremental sort), rather
-- than the whole answer. The rows are the same: the same branches, the same watermark (constant
-- per statement, as before: TimescaleDB folds the watermark call of a query that reads the
-- materialization hypertable), so late readings and the not-yet-materialized hours still count
-- at once.
--
-- TimescaleDB writes this view itself only when the aggregate is created or its materialized_only
-- setting changes (then from this definition: the rows stay the same). Its refresh fills the
-- materialization hypertable from the readings, not through this view; the daily aggregate, built
-- on this view, reads the same rows through it. down.sql writes TimescaleDB's own definition back.
DO $migration$
DECLARE
  hourly record;
BEGIN
  SELECT a.mat_hypertable_id AS id, format('%I.%I', h.schema_name, h.table_name) AS materialization
  INTO STRICT hourly
  FROM _timescaledb_catalog.continuous_agg a
  JOIN _timescaledb_catalog.hypertable h ON h.id = a.mat_hypertable_id
  WHERE a.user_view_schema = current_schema() AND a.user_view_name = 'sensor_readings_hourly';

  -- the watermark written as TimescaleDB writes it (COALESCE(to_timestamp(cagg_watermark(id)), ...)),
  -- which is what it recognizes to fold it into a constant at planning
  EXECUTE format($view$
    CREATE OR REPLACE VIEW sensor_readings_hourly AS
    (SELECT bucket, cooling_unit_id, specification_type, value, min, max, sample_count
     FROM %1$s
     WHERE bucket < COALESCE(_timescaledb_functions.to_timestamp(_timescaledb_functions.cagg_watermark(%2$s)),
                             '-infinity'::timestamptz)
     ORDER BY bucket)
    UNION ALL
    (SELECT time_bucket(INTERVAL '1 hour', recorded_at) AS bucket, cooling_unit_id, specification_type,
            avg(value) AS value, min(value) AS min, max(value) AS max, count(*)::integer AS sample_count
     FROM sensor_readings
     WHERE recorded_at >= COALESCE(_timescaledb_functions.to_timestamp(_timescaledb_functions.cagg_watermark(%2$s)),
                                   '-infinity'::timestamptz)
     GROUP BY 1, 2, 3
     ORDER BY 1)
  $view$, hourly.materialization, hourly.id);
END
$migration$;
