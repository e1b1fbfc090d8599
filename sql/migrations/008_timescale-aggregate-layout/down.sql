-- Undoes up.sql: the aggregates back in row store (every compressed chunk decompressed first:
-- TimescaleDB refuses to switch the columnstore off while any is), new chunks of 10 days. Chunks
-- created meanwhile keep their 30 or 90 days.
CALL remove_columnstore_policy('sensor_readings_hourly', if_exists => true);
CALL remove_columnstore_policy('sensor_readings_daily', if_exists => true);
SELECT count(decompress_chunk(chunk, if_compressed => true)) FROM show_chunks('sensor_readings_hourly') chunk;
SELECT count(decompress_chunk(chunk, if_compressed => true)) FROM show_chunks('sensor_readings_daily') chunk;
ALTER MATERIALIZED VIEW sensor_readings_hourly SET (timescaledb.enable_columnstore = false);
ALTER MATERIALIZED VIEW sensor_readings_daily SET (timescaledb.enable_columnstore = false);
SELECT set_chunk_time_interval('sensor_readings_hourly', INTERVAL '10 days');
SELECT set_chunk_time_interval('sensor_readings_daily', INTERVAL '10 days');
