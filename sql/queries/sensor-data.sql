-- GET /api/v1/sensor-data (src/sensors/history.ts). The same SQL for both storage profiles: it
-- reads only sensor_readings, sensor_readings_hourly and sensor_readings_daily.
-- Common parameters: $1 int[] units, $2 specification_type[] types, $3/$4 [from, to) instants.
-- Order everywhere: time, cooling_unit_id, specification_type (alphabetical, as text in "C").
-- Every page statement also returns `head`, the change feed's last position in the statement's own
-- snapshot: a walk continued by cursor knows whether the server it read (a replica behind the
-- primary) has every reading stored before the walk began (src/sensors/history.ts).

-- name: dayCounts
-- Records per UTC day of the window, for each kind of history, from the daily aggregate (exact:
-- the aggregates count every reading once): total_count and page positions without counting
-- readings. ms and float8 so the driver hands back plain numbers.
SELECT extract(epoch FROM bucket)::float8 * 1000 AS day_ms,
       sum(sample_count)::float8 AS raw,
       sum(hour_count)::float8 AS hourly,
       count(*)::float8 AS daily
FROM sensor_readings_daily
WHERE cooling_unit_id = ANY($1::int[]) AND specification_type = ANY($2::specification_type[])
  AND bucket >= $3::timestamptz AND bucket < $4::timestamptz
GROUP BY bucket
ORDER BY bucket;

-- name: hourCounts
-- Readings per hour of [$3, $4) (a few days at most), to place a page of raw readings to the hour.
SELECT extract(epoch FROM bucket)::float8 * 1000 AS hour_ms, sum(sample_count)::float8 AS raw
FROM sensor_readings_hourly
WHERE cooling_unit_id = ANY($1::int[]) AND specification_type = ANY($2::specification_type[])
  AND bucket >= $3::timestamptz AND bucket < $4::timestamptz
GROUP BY bucket
ORDER BY bucket;

-- name: rawReadings
-- One page of readings in [$3, $4), after the key ($5, $6, $7) when given, skipping $8, at most $9.
-- The time range keeps the scan (and the sort) to about a page whatever the page number. Read as
-- `page` by rawPage and rawPageJson (src/sensors/history.ts puts `WITH page AS (...)` before them),
-- which format only the page's rows, not every row the sort reads.
SELECT recorded_at, cooling_unit_id, specification_type::text AS specification_type, value
FROM sensor_readings
WHERE cooling_unit_id = ANY($1::int[]) AND specification_type = ANY($2::specification_type[])
  AND recorded_at >= $3::timestamptz AND recorded_at < $4::timestamptz
  AND ($5::timestamptz IS NULL
       OR (recorded_at, cooling_unit_id, specification_type::text COLLATE "C") > ($5::timestamptz, $6::int, $7::text COLLATE "C"))
ORDER BY recorded_at, cooling_unit_id, specification_type::text COLLATE "C"
OFFSET $8 LIMIT $9

-- name: rawPage
-- The page as rows (for values rawPageJson leaves to JavaScript).
SELECT sensor_timestamp_text(recorded_at) AS timestamp, cooling_unit_id, specification_type, value, 1 AS sample_count,
       (SELECT coalesce(max(id), (SELECT pruned_through FROM sensor_changes_state)) FROM sensor_changes)::text AS head
FROM page
ORDER BY recorded_at, cooling_unit_id, specification_type COLLATE "C";

-- name: rawPageJson
-- The page written as the response's JSON by PostgreSQL: its records joined by commas (body), how
-- many (records), and how many values JSON.stringify would write differently from float8out
-- (unusual: exponent notation below 1e-4 or from 1e15 on), for which the caller reads the page as
-- rows instead. A 1,000-reading page costs the service ~1.1 ms of CPU this way against ~3 ms for
-- rows parsed into objects and serialized again (bench/sensor-pages-per-second.ts). Numbers:
-- float8out's shortest round-trip digits (extra_float_digits = 1, set by the pool), as
-- JavaScript's; -0 is written 0, as JSON.stringify does.
SELECT count(*)::int AS records,
       count(*) FILTER (WHERE value_json IS NULL)::int AS unusual_values,
       coalesce(string_agg(
         '{"timestamp":"' || sensor_timestamp_text(recorded_at) || '","cooling_unit_id":' || cooling_unit_id ||
         ',"specification_type":"' || specification_type || '","value":' || value_json || ',"sample_count":1}',
         ',' ORDER BY recorded_at, cooling_unit_id, specification_type COLLATE "C"), '') AS body,
       (SELECT coalesce(max(id), (SELECT pruned_through FROM sensor_changes_state)) FROM sensor_changes)::text AS head
FROM (
  SELECT recorded_at, cooling_unit_id, specification_type,
         CASE WHEN value = 0 THEN '0'
              WHEN abs(value) >= 1e-4 AND abs(value) < 1e15 THEN value::text END AS value_json
  FROM page
) written;

-- name: hourlyPage
SELECT sensor_timestamp_text(bucket) AS timestamp, cooling_unit_id,
       specification_type::text AS specification_type, value, sample_count, min, max,
       (SELECT coalesce(max(id), (SELECT pruned_through FROM sensor_changes_state)) FROM sensor_changes)::text AS head
FROM sensor_readings_hourly
WHERE cooling_unit_id = ANY($1::int[]) AND specification_type = ANY($2::specification_type[])
  AND bucket >= $3::timestamptz AND bucket < $4::timestamptz
  AND ($5::timestamptz IS NULL
       OR (bucket, cooling_unit_id, specification_type::text COLLATE "C") > ($5::timestamptz, $6::int, $7::text COLLATE "C"))
ORDER BY bucket, cooling_unit_id, specification_type::text COLLATE "C"
OFFSET $8 LIMIT $9;

-- name: dailyPage
SELECT sensor_timestamp_text(bucket) AS timestamp, cooling_unit_id,
       specification_type::text AS specification_type, value, sample_count, min, max,
       (SELECT coalesce(max(id), (SELECT pruned_through FROM sensor_changes_state)) FROM sensor_changes)::text AS head
FROM sensor_readings_daily
WHERE cooling_unit_id = ANY($1::int[]) AND specification_type = ANY($2::specification_type[])
  AND bucket >= $3::timestamptz AND bucket < $4::timestamptz
  AND ($5::timestamptz IS NULL
       OR (bucket, cooling_unit_id, specification_type::text COLLATE "C") > ($5::timestamptz, $6::int, $7::text COLLATE "C"))
ORDER BY bucket, cooling_unit_id, specification_type::text COLLATE "C"
OFFSET $8 LIMIT $9;
