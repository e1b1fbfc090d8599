-- Undoes postgres.sql, postgres-upkeep.sql and common.sql: back to 001's plain table.
DROP VIEW sensor_readings_hourly, sensor_readings_daily;
DROP TABLE sensor_readings, sensor_rollup_hourly, sensor_rollup_daily, sensor_rollup_compacted, sensor_storage;
DROP FUNCTION sensor_prepare_range, sensor_maintain, sensor_rollups_add, sensor_rollups_rebuild,
  sensor_rollups_after_delete, sensor_rollups_after_update, sensor_rollups_truncate,
  sensor_stale_aggregates, sensor_timestamp_text, sensor_compact_rollups, sensor_compact;
CREATE TABLE sensor_readings (
  cooling_unit_id     integer NOT NULL REFERENCES cooling_units (id),
  specification_type  specification_type NOT NULL,
  recorded_at         timestamptz NOT NULL,
  value               double precision NOT NULL,
  PRIMARY KEY (cooling_unit_id, specification_type, recorded_at)
);
