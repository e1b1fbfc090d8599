-- Sensor store, timescale profile: how the continuous aggregates are laid out on disk, for the
-- query that matters, one unit's (or a few units') history over a long window in time order
-- (sql/queries/sensor-data.sql; the bench's P4 reads a year of one unit hourly). Applied by
-- ../008_timescale-aggregate-layout.js to new and existing timescale databases.
--
-- Before: 10-day materialization chunks (TimescaleDB's default, 10x the readings' 1-day chunks),
-- row store in refresh order. One unit's hourly year was 17,520 rows on ~9,800 buffers (every
-- unit's rows of an hour lie together, so each page held a row or two of the unit) in 38 chunks.
--
-- 1. Columnstore, segmented by series and ordered by time: once a chunk is a week past its end
--    (late batches arrive hours late, not weeks; the refresh itself stays well before that),
--    each unit's and type's rows are stored together, up to 1,000 to a compressed batch with its
--    bucket range beside it. A unit's hourly year is then 26 batches found through the
--    compressed chunks' (cooling_unit_id, specification_type, bucket range) index: ~470 buffers
--    in 13 chunks. A late reading into a compressed chunk still counts at once: the refresh
--    rewrites its buckets in place, decompressing the batches that overlap them (the chunk is
--    partially compressed until the policy compresses it again). That costs more than a refresh
--    in row store: a refreshed hour is a time range, so every unit's batches over it are
--    decompressed (0.2-0.7 s for one hour at 100 units on the bench machine; it grows with the
--    number of units). Hence compression a week after a chunk ends: only backfills pay it.
-- 2. Larger materialization chunks: hourly 30 days (a year in 13 chunks; at 10,000 units a chunk
--    is ~14 M rows, ~2 GB before compression, and only the newest one or two are row store),
--    daily 90 days (a year in 5, ten years in 41, for aggregation=daily and the per-day counts
--    every cold page reads; ~2 M rows a chunk at 10,000 units). Larger still would leave the
--    newest chunk, written for that long before it can be compressed, scattered in row store.
--    New chunks only: the existing 10-day ones stay, and are compressed like the rest.
-- 3. The row-store index (cooling_unit_id, specification_type, bucket) of
--    003_sensor-store/timescale.sql stays for the chunks not yet compressed; compressed chunks get
--    TimescaleDB's index on the segment columns and each batch's bucket range.
SELECT set_chunk_time_interval('sensor_readings_hourly', INTERVAL '30 days');
SELECT set_chunk_time_interval('sensor_readings_daily', INTERVAL '90 days');

ALTER MATERIALIZED VIEW sensor_readings_hourly SET (
  timescaledb.enable_columnstore = true,
  timescaledb.segmentby = 'cooling_unit_id, specification_type',
  timescaledb.orderby = 'bucket'
);
ALTER MATERIALIZED VIEW sensor_readings_daily SET (
  timescaledb.enable_columnstore = true,
  timescaledb.segmentby = 'cooling_unit_id, specification_type',
  timescaledb.orderby = 'bucket'
);
CALL add_columnstore_policy('sensor_readings_hourly', after => INTERVAL '7 days');
CALL add_columnstore_policy('sensor_readings_daily', after => INTERVAL '7 days');
