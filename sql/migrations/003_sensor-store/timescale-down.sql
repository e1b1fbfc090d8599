-- Undoes timescale.sql and common.sql: back to 001's plain table. The extension stays
-- (other objects may use it; dropping it is an operator's decision).
DROP MATERIALIZED VIEW sensor_readings_daily;
DROP MATERIALIZED VIEW sensor_readings_hourly;
DROP TABLE sensor_readings;
DROP TABLE sensor_storage;
DROP FUNCTION sensor_prepare_range, sensor_maintain, sensor_compact, sensor_stale_aggregates, sensor_timestamp_text;
CREATE TABLE sensor_readings (
  cooling_unit_id     integer NOT NULL REFERENCES cooling_units (id),
  specification_type  specification_type NOT NULL,
  recorded_at         timestamptz NOT NULL,
  value               double precision NOT NULL,
  PRIMARY KEY (cooling_unit_id, specification_type, recorded_at)
);
