-- GET /api/v1/sensor-data/bulk (src/sensors/bulk.ts): a slice of sensor history for COPY ... TO
-- STDOUT, which PostgreSQL writes as CSV or as NDJSON lines itself (or as binary tuples a Parquet
-- thread encodes), at its own pace, in one snapshot. COPY takes no bind parameters: $1 int[] units,
-- $2 specification_type[] types and $3/$4 the [from, to) instants are written in as quoted literals
-- by the caller (integers, enum labels and instants it formatted itself; never text from a
-- request). The records are those of GET /api/v1/sensor-data, in its order, with its columns and
-- values: a mean rounded to 12 significant digits (as withoutFloatNoise in
-- src/sensors/history.ts). The rows queries keep the instant as timestamptz (`at`): the text
-- formats write it as the pages do (csvColumns, ndjsonLine), the binary one as it is, to the
-- microsecond; their column types are what workers/parquet/copy-columns.ts decodes.

-- name: rawRows
SELECT recorded_at AS at, cooling_unit_id, specification_type::text AS specification_type,
       value, 1 AS sample_count, NULL::float8 AS min, NULL::float8 AS max
FROM sensor_readings
WHERE cooling_unit_id = ANY($1::int[]) AND specification_type = ANY($2::specification_type[])
  AND recorded_at >= $3::timestamptz AND recorded_at < $4::timestamptz
ORDER BY recorded_at, cooling_unit_id, specification_type::text COLLATE "C"

-- name: hourlyRows
SELECT bucket AS at, cooling_unit_id, specification_type::text AS specification_type,
       CASE WHEN value = 0 THEN 0 ELSE round(value::numeric, 11 - floor(log(abs(value)))::int)::float8 END AS value,
       sample_count, min, max
FROM sensor_readings_hourly
WHERE cooling_unit_id = ANY($1::int[]) AND specification_type = ANY($2::specification_type[])
  AND bucket >= $3::timestamptz AND bucket < $4::timestamptz
ORDER BY bucket, cooling_unit_id, specification_type::text COLLATE "C"

-- name: dailyRows
SELECT bucket AS at, cooling_unit_id, specification_type::text AS specification_type,
       CASE WHEN value = 0 THEN 0 ELSE round(value::numeric, 11 - floor(log(abs(value)))::int)::float8 END AS value,
       sample_count, min, max
FROM sensor_readings_daily
WHERE cooling_unit_id = ANY($1::int[]) AND specification_type = ANY($2::specification_type[])
  AND bucket >= $3::timestamptz AND bucket < $4::timestamptz
ORDER BY bucket, cooling_unit_id, specification_type::text COLLATE "C"

-- name: csvColumns
-- The records of `rows` with the header and instants of GET /api/v1/sensor-data.
SELECT sensor_timestamp_text(at) AS timestamp, cooling_unit_id, specification_type, value, sample_count, min, max
FROM rows

-- name: ndjsonLine
-- One record of `rows` as a line of JSON, as GET /api/v1/sensor-data writes it (raw readings
-- without min and max). COPY's text format escapes only backslashes and control characters, which
-- no field here holds.
SELECT '{"timestamp":"' || sensor_timestamp_text(at) || '","cooling_unit_id":' || cooling_unit_id ||
       ',"specification_type":"' || specification_type || '","value":' || value || ',"sample_count":' || sample_count ||
       CASE WHEN min IS NULL THEN '' ELSE ',"min":' || min || ',"max":' || max END || '}'
FROM rows

-- name: binaryColumns
-- The records of `rows` for COPY's binary format, each column in the type the Parquet thread
-- reads: timestamptz, int4, text, float8, int4, float8, float8 (a type a view changes fails the
-- slice there, never writes a wrong value).
SELECT at, cooling_unit_id::int4, specification_type, value::float8, sample_count::int4, min::float8, max::float8
FROM rows
