-- The change feed (src/sensors/changes.ts, sql/migrations/013_sensor-changes.sql).

-- name: changesAfter
-- One page of the changes of units $1 after position $2, in the order they committed (at most $3
-- rows), with the feed's state, all from one snapshot: a cursor checked against pruned_through is
-- never answered from a table pruned after the check, and head (the last change committed, any
-- unit's) is past every change this page could have missed. Always one row at least (the state's).
SELECT s.pruned_through::text AS pruned_through, s.cursor_key,
       coalesce((SELECT max(id) FROM sensor_changes), s.pruned_through)::text AS head,
       c.id::text AS id, c.cooling_unit_id, c.specification_type::text AS specification_type,
       sensor_timestamp_text(c.first_at) AS first_at, sensor_timestamp_text(c.last_at) AS last_at,
       c.readings, sensor_timestamp_text(c.landed_at) AS landed_at
FROM sensor_changes_state s
LEFT JOIN LATERAL (
  SELECT * FROM sensor_changes
  WHERE id > $2::bigint AND cooling_unit_id = ANY($1::int[])
  ORDER BY id
  LIMIT $3
) c ON true
ORDER BY c.id;

-- name: prune
-- forgets the changes that landed before $1 (src/plugins/sensor-store.ts, every few hours)
SELECT sensor_changes_prune($1::timestamptz)::float8 AS removed;

-- name: cursorKey
-- the key every cursor is sealed with (the sensor-data walk's, src/sensors/history-cursor.ts; it never changes)
SELECT cursor_key FROM sensor_changes_state;
