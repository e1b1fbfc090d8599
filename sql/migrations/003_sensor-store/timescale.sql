-- Sensor store, timescale profile: a hypertable and two continuous aggregates, declared together
-- with their policies, behind the same relation names and columns as the postgres profile:
--   sensor_readings          raw readings (hypertable)
--   sensor_readings_hourly   bucket, cooling_unit_id, specification_type, value (mean), min, max, sample_count
--   sensor_readings_daily    the same per UTC day, plus hour_count (hours with readings)
-- Both aggregates are real-time (materialized_only = false): buckets past the materialized
-- watermark are computed from the readings at query time, so a reading shows up at once.
CREATE EXTENSION IF NOT EXISTS timescaledb;

CREATE TABLE sensor_readings (
  cooling_unit_id     integer NOT NULL,
  specification_type  specification_type NOT NULL,
  recorded_at         timestamptz NOT NULL,
  value               double precision NOT NULL,
  -- one reading per unit, type and instant (docs/contract.md, "Records"); it also serves the per-unit reads
  PRIMARY KEY (cooling_unit_id, specification_type, recorded_at)
);

-- One-day chunks: ~2M readings a day make a ~200 MB chunk (primary key included), so the chunk
-- being written and its index stay in memory even on a small server (TimescaleDB's guidance: the
-- active chunks within ~25% of RAM), while a year is still only ~366 chunks for the planner.
-- Compression and retention then act day by day. No default time index: the primary key serves.
SELECT create_hypertable('sensor_readings', by_range('recorded_at', INTERVAL '1 day'), create_default_indexes => false);

CREATE MATERIALIZED VIEW sensor_readings_hourly
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 hour', recorded_at) AS bucket, cooling_unit_id, specification_type,
       avg(value) AS value, min(value) AS min, max(value) AS max, count(*)::integer AS sample_count
FROM sensor_readings
GROUP BY 1, 2, 3
WITH NO DATA;
CREATE INDEX sensor_readings_hourly_unit_idx ON sensor_readings_hourly (cooling_unit_id, specification_type, bucket);

-- Daily on top of hourly (a hierarchical aggregate): a day reads 24 hourly rows, not 96 readings,
-- and hour_count (hourly rows in the day) comes for free. The mean is weighted by sample_count,
-- so it is the mean of the readings, not a mean of hourly means.
CREATE MATERIALIZED VIEW sensor_readings_daily
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 day', bucket) AS bucket, cooling_unit_id, specification_type,
       sum(value * sample_count) / sum(sample_count) AS value, min(min) AS min, max(max) AS max,
       sum(sample_count)::integer AS sample_count, count(*)::integer AS hour_count
FROM sensor_readings_hourly
GROUP BY 1, 2, 3
WITH NO DATA;
CREATE INDEX sensor_readings_daily_unit_idx ON sensor_readings_daily (cooling_unit_id, specification_type, bucket);

-- Refresh policies. start_offset NULL: each run processes every invalidated range however old
-- (only what changed is recomputed), so a backfill or a batch days late is never left out. The
-- ingest also refreshes a late batch's buckets itself right after committing it
-- (sensor_stale_aggregates), so late readings do not wait for the next run either.
SELECT add_continuous_aggregate_policy('sensor_readings_hourly',
  start_offset => NULL, end_offset => INTERVAL '1 hour', schedule_interval => INTERVAL '15 minutes');
SELECT add_continuous_aggregate_policy('sensor_readings_daily',
  start_offset => NULL, end_offset => INTERVAL '1 day', schedule_interval => INTERVAL '1 hour');

-- Columnar compression of chunks a week old (late batches arrive hours late, not weeks):
-- segmented by series, so one unit's history decompresses without touching the others.
ALTER TABLE sensor_readings SET (
  timescaledb.compress,
  timescaledb.compress_segmentby = 'cooling_unit_id, specification_type',
  timescaledb.compress_orderby = 'recorded_at'
);
SELECT add_compression_policy('sensor_readings', compress_after => INTERVAL '7 days');

-- Chunks and policies do the upkeep: nothing to prepare or maintain from the application, and
-- the ingest COPYs straight into the hypertable.
CREATE FUNCTION sensor_prepare_range(from_at timestamptz, to_at timestamptz)
RETURNS TABLE (target text, range_start timestamptz, range_end timestamptz)
LANGUAGE sql STABLE AS $$ SELECT 'sensor_readings'::text, '-infinity'::timestamptz, 'infinity'::timestamptz $$;
CREATE FUNCTION sensor_maintain(at timestamptz DEFAULT now()) RETURNS integer
LANGUAGE sql STABLE AS $$ SELECT 0 $$;
CREATE FUNCTION sensor_compact(at timestamptz DEFAULT now(), most integer DEFAULT 3) RETURNS integer
LANGUAGE sql STABLE AS $$ SELECT 0 $$;

-- The part of [from_at, to_at) that each aggregate has already materialized, hourly first (daily
-- is built on it): the windows to refresh after readings landed there late. Never past the
-- watermark: refreshing beyond it would move the watermark over buckets not yet materialized.
CREATE FUNCTION sensor_stale_aggregates(from_at timestamptz, to_at timestamptz)
RETURNS TABLE (aggregate text, window_start timestamptz, window_end timestamptz)
LANGUAGE sql STABLE AS $$
  SELECT a.user_view_name::text, s.window_start, least(s.window_end, w.watermark)
  FROM _timescaledb_catalog.continuous_agg a
  CROSS JOIN LATERAL (
    SELECT _timescaledb_functions.to_timestamp(_timescaledb_functions.cagg_watermark(a.mat_hypertable_id)) AS watermark
  ) w
  CROSS JOIN LATERAL (
    SELECT CASE WHEN a.user_view_name = 'sensor_readings_hourly' THEN time_bucket(INTERVAL '1 hour', from_at)
                ELSE time_bucket(INTERVAL '1 day', from_at) END AS window_start,
           CASE WHEN a.user_view_name = 'sensor_readings_hourly' THEN time_bucket(INTERVAL '1 hour', to_at) + INTERVAL '1 hour'
                ELSE time_bucket(INTERVAL '1 day', to_at) + INTERVAL '1 day' END AS window_end
  ) s
  WHERE a.user_view_name IN ('sensor_readings_hourly', 'sensor_readings_daily')
    AND w.watermark IS NOT NULL AND s.window_start < w.watermark
  ORDER BY a.user_view_name = 'sensor_readings_daily'
$$;
