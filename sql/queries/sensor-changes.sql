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

-- name: readingsVersion
-- What a page of units $1's history is read at, for its ETag (src/sensors/versions.ts): the last
-- change recorded for any of those units (loads become visible in id order, so the units' readings
-- are those of their changes up to it), or how far the feed was pruned when none of theirs is kept,
-- so a version never comes back with other readings behind it; whether that change landed less than
-- $2 seconds ago (a late load's aggregates are refreshed after its commit, and counts cached before
-- it live a while); whether raw readings from $3 on lie where the store's retention may drop them
-- (it records no change: a day of margin for clocks); and the feed's head (any unit's), to tell a
-- page read from an older snapshot. One index probe per unit.
SELECT greatest(last.id, s.pruned_through)::text AS version,
       coalesce(last.landed_at > now() - make_interval(secs => $2::float8), false) AS settling,
       coalesce($3::timestamptz < now() - r.retention + interval '1 day', false) AS within_retention,
       coalesce((SELECT max(id) FROM sensor_changes), s.pruned_through)::text AS head
FROM sensor_changes_state s
CROSS JOIN sensor_storage r
LEFT JOIN LATERAL (
  SELECT c.id, c.landed_at
  FROM unnest($1::int[]) AS u (id)
  CROSS JOIN LATERAL (SELECT id, landed_at FROM sensor_changes WHERE cooling_unit_id = u.id ORDER BY id DESC LIMIT 1) c
  ORDER BY c.id DESC
  LIMIT 1
) last ON true;

-- name: feedVersion
-- What a page of the change feed is read at, for its ETag: the head and how far the feed was
-- pruned, exactly as changesAfter reads them (a page is a function of these, its cursor and units).
SELECT coalesce((SELECT max(id) FROM sensor_changes), s.pruned_through)::text AS head, s.pruned_through::text AS pruned_through
FROM sensor_changes_state s;
