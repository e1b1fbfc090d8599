-- Loading readings (src/sensors/ingest.ts). Each batch is one transaction.

-- name: knownUnitIds
-- soft-deleted units included, with when they were deleted (microseconds since 2000-01-01 UTC):
-- their history from before it may still arrive late, and nothing after it is theirs
SELECT id, (extract(epoch FROM deleted_at) * 1000000 - 946684800000000)::float8 AS "deletedAtUs"
FROM cooling_units WHERE id = ANY($1::int[]);

-- name: prepareRange
-- where a batch's readings, first to last inclusive, go: the postgres profile's weekly partitions
-- (created if missing), or the hypertable; bounds in ms (+-Infinity for the hypertable)
SELECT target, extract(epoch FROM range_start)::float8 * 1000 AS start_ms, extract(epoch FROM range_end)::float8 * 1000 AS end_ms
FROM sensor_prepare_range($1::timestamptz, $2::timestamptz + interval '1 microsecond')
ORDER BY range_start;

-- name: createStaging
-- the slow path's staging table: per session, emptied at every commit
CREATE TEMP TABLE IF NOT EXISTS sensor_ingest_staging (
  cooling_unit_id     integer NOT NULL,
  specification_type  specification_type NOT NULL,
  recorded_at         timestamptz NOT NULL,
  value               double precision NOT NULL
) ON COMMIT DELETE ROWS;

-- name: insertStaged
-- duplicates (already stored, or repeated within the batch) are dropped before any trigger or
-- aggregate sees them: a reading is never counted twice. The new ones come back for the change
-- feed (src/sensors/change-spans.ts), their instants in microseconds since 2000-01-01 UTC.
INSERT INTO sensor_readings (cooling_unit_id, specification_type, recorded_at, value)
SELECT cooling_unit_id, specification_type, recorded_at, value FROM sensor_ingest_staging
ON CONFLICT (cooling_unit_id, specification_type, recorded_at) DO NOTHING
RETURNING cooling_unit_id AS "unitId", specification_type::text AS type,
          (extract(epoch FROM recorded_at) * 1000000 - 946684800000000)::float8 AS "recordedAtUs";

-- name: recordChanges
-- the batch's spans for the change feed, under the feed's ordering lock (held to the commit)
SELECT sensor_changes_record($1::int[], $2::specification_type[], $3::timestamptz[], $4::timestamptz[], $5::int[]);
