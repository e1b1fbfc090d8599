-- GET /api/v1/analytics/users: farmer figures per period bucket over the units U a request
-- reports on (the units the token may read after the cooling_unit_id / location_id filters, and
-- the deleted ones it read while they were live: docs/figures.md, "Deleted units").
--
-- Definitions (docs/figures.md, "users"; buckets are UTC days [period_start 00:00, period_end + 1 day 00:00)):
--   population of U  = users with role FARMER who were registered by an operator assigned to a
--                      unit in U (operator_assignments), OR who have a check-in (at any time) at a
--                      unit in U. A farmer can belong to the populations of several companies.
--                      Deactivated farmers (is_active = false) stay in: they were registered.
--   registered_users = population farmers with date_joined before the end of the bucket
--   sign_ups         = population farmers with date_joined inside the bucket
--   active_users     = distinct farmers with a check-in or a check-out at a unit in U inside the
--                      bucket (a farmer at two units counts once here, once per unit below)
--   by_cooling_unit  = for every unit of U reporting on the bucket (ascending id): active_users,
--                      check_ins and check_outs at that unit inside the bucket
--
-- These queries only fetch; workers/rollups/users.ts counts. A page of 100 daily buckets over
-- 1,000 units is 100,000 breakdown entries: counting ~100,000 movements into typed arrays and
-- writing the JSON there takes a fraction of what PostgreSQL spent hashing the same rows by
-- (bucket, unit, farmer) and building 100,000 json objects (bench/analytics-scale.ts, P10).
-- Every query: $1 the unit ids of U, $2 the page's first day, $3 its last day (inclusive). Days
-- leave as offsets from $2, so the page's buckets are found by indexing an array, and the scans
-- are bounded by constants, so the planner sizes the page, not the table.

-- name: usersJoined
-- The population by the UTC day it joined, up to the page's last day: [[day, farmers], ...] with
-- day -1 for every day before the page (registered_users = those + the sign-ups up to a bucket).
-- Two semi-joins, so the planner picks each side: over many units it asks each farmer who joined
-- by the page's end whether one of their check-ins was at U (an index probe that stops at the
-- first), over few units it reads those units' check-ins. (Hashing the farmer of every check-in
-- U ever had cost 40-80 ms at 1,000 units, against 2-3 ms.)
WITH population AS (
  SELECT f.id, f.date_joined
  FROM users f
  WHERE f.role = 'FARMER'
    AND f.date_joined < ($3::date + 1)::timestamp AT TIME ZONE 'UTC'
    AND f.registered_by IN (SELECT operator_id FROM operator_assignments WHERE cooling_unit_id = ANY($1::int[]))
  UNION
  SELECT f.id, f.date_joined
  FROM users f
  WHERE f.role = 'FARMER'
    AND f.date_joined < ($3::date + 1)::timestamp AT TIME ZONE 'UTC'
    AND EXISTS (SELECT 1 FROM check_ins ci WHERE ci.farmer_id = f.id AND ci.cooling_unit_id = ANY($1::int[]))
)
SELECT coalesce(json_agg(json_build_array(day, farmers)), '[]')::text AS rows
FROM (
  SELECT CASE WHEN date_joined < $2::date::timestamp AT TIME ZONE 'UTC' THEN -1
              ELSE (date_joined AT TIME ZONE 'UTC')::date - $2::date END AS day,
         count(*) AS farmers
  FROM population
  GROUP BY 1
) joined;

-- name: usersCheckIns
-- The page's check-ins at U as three parallel JSON arrays: [[day, ...], [unit, ...], [farmer, ...]]
-- (one array_agg per column took half the time of a JSON value or a text per row; the three
-- aggregate the same rows in the same order), one such row per unit: a busy year's movements as
-- one text were one large message, and node-pg reading it (a buffer doubled up to its size, then
-- a string of it) set each worker's peak memory (bench P8). An index-only scan of
-- check_ins_unit_time_farmer_idx (migration 009_analytics-figures), grouped in its order.
SELECT '[[' || array_to_string(array_agg(day), ',') || '],['
            || array_to_string(array_agg(cooling_unit_id), ',') || '],['
            || array_to_string(array_agg(farmer_id), ',') || ']]' AS rows
FROM (
  SELECT (checked_in_at AT TIME ZONE 'UTC')::date - $2::date AS day, cooling_unit_id, farmer_id
  FROM check_ins
  WHERE cooling_unit_id = ANY($1::int[])
    AND checked_in_at >= $2::date::timestamp AT TIME ZONE 'UTC'
    AND checked_in_at < ($3::date + 1)::timestamp AT TIME ZONE 'UTC'
) movement
GROUP BY cooling_unit_id;

-- name: usersCheckOuts
-- The page's check-outs at U, as usersCheckIns.
SELECT '[[' || array_to_string(array_agg(day), ',') || '],['
            || array_to_string(array_agg(cooling_unit_id), ',') || '],['
            || array_to_string(array_agg(farmer_id), ',') || ']]' AS rows
FROM (
  SELECT (checked_out_at AT TIME ZONE 'UTC')::date - $2::date AS day, cooling_unit_id, farmer_id
  FROM check_outs
  WHERE cooling_unit_id = ANY($1::int[])
    AND checked_out_at >= $2::date::timestamp AT TIME ZONE 'UTC'
    AND checked_out_at < ($3::date + 1)::timestamp AT TIME ZONE 'UTC'
) movement
GROUP BY cooling_unit_id;
