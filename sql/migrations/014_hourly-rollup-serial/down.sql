-- 003's view, which may be read in parallel.
CREATE OR REPLACE VIEW sensor_readings_hourly AS
  SELECT bucket, cooling_unit_id, 'TEMPERATURE'::specification_type AS specification_type,
         t_sum / t_count AS value, t_min AS min, t_max AS max, t_count AS sample_count
  FROM sensor_rollup_hourly WHERE t_count > 0
  UNION ALL
  SELECT bucket, cooling_unit_id, 'HUMIDITY'::specification_type, h_sum / h_count, h_min, h_max, h_count
  FROM sensor_rollup_hourly WHERE h_count > 0;

DROP FUNCTION sensor_serial_read();
