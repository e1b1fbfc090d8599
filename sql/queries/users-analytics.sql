-- GET /api/v1/analytics/users: farmer figures per period bucket over a unit scope U (the units
-- the token may read, after the cooling_unit_id / location_id filters).
--
-- Definitions (buckets are UTC days [period_start 00:00, period_end + 1 day 00:00)):
--   population of U  = users with role FARMER who were registered by an operator assigned to a
--                      unit in U (operator_assignments), OR who have a check-in (at any time) at a
--                      unit in U. A farmer can belong to the populations of several companies.
--                      Deactivated farmers (is_active = false) stay in: they were registered.
--   registered_users = population farmers with date_joined before the end of the bucket
--   sign_ups         = population farmers with date_joined inside the bucket
--   active_users     = distinct farmers with a check-in or a check-out at a unit in U inside the
--                      bucket (a farmer at two units counts once here, once per unit below)
--   by_cooling_unit  = for every unit of U (ascending id): active_users, check_ins and check_outs
--                      at that unit inside the bucket
-- Soft-deleted units are never in U, so their operators' farmers and their movements count
-- nowhere. An empty U gives zeros and an empty by_cooling_unit.

-- name: usersByPeriod
-- One row per bucket of the page. $1 unit ids (U), $2 bucket first days, $3 bucket last days
-- (inclusive). Events are mapped to their bucket through their UTC day (an equality join on a
-- day -> bucket table of at most 366 rows), so the cost grows with the events, not events x buckets.
WITH bucket AS (
  SELECT b.period_start, b.period_end,
         b.period_start::timestamp AT TIME ZONE 'UTC' AS span_start,
         (b.period_end + 1)::timestamp AT TIME ZONE 'UTC' AS span_end
  FROM unnest($2::date[], $3::date[]) AS b (period_start, period_end)
),
span AS (
  SELECT min(span_start) AS lo, max(span_end) AS hi FROM bucket
),
bucket_day AS (
  SELECT d::date AS day, b.period_start
  FROM bucket b, generate_series(b.period_start, b.period_end, interval '1 day') AS d
),
-- the farmers who ever checked in at U are deduplicated by hashing (GROUP BY), not by sorting
-- a UNION of every check-in; an operator on several units of U is one operator (IN, not JOIN)
population AS (
  SELECT f.id, f.date_joined
  FROM users f
  WHERE f.role = 'FARMER'
    AND f.id IN (
      SELECT registered.id
      FROM users registered
      WHERE registered.registered_by IN (SELECT operator_id FROM operator_assignments WHERE cooling_unit_id = ANY($1::int[]))
      UNION ALL
      SELECT farmer_id FROM check_ins WHERE cooling_unit_id = ANY($1::int[]) GROUP BY farmer_id
    )
),
-- registered before the page's first bucket, then sign-ups per day inside the page's span:
-- registered_users of a bucket = earlier + sign-ups up to its last day (exact even with gaps)
earlier AS (
  SELECT count(*) AS n FROM population WHERE date_joined < (SELECT lo FROM span)
),
joined_day AS (
  SELECT (date_joined AT TIME ZONE 'UTC')::date AS day, count(*) AS n
  FROM population
  WHERE date_joined >= (SELECT lo FROM span) AND date_joined < (SELECT hi FROM span)
  GROUP BY 1
),
registration AS (
  SELECT b.period_start,
         (SELECT n FROM earlier) + coalesce(sum(j.n), 0) AS registered_users,
         coalesce(sum(j.n) FILTER (WHERE j.day >= b.period_start), 0) AS sign_ups
  FROM bucket b
  LEFT JOIN joined_day j ON j.day <= b.period_end
  GROUP BY b.period_start
),
movement AS (
  SELECT bd.period_start, m.cooling_unit_id, m.farmer_id, m.check_in
  FROM (
    SELECT cooling_unit_id, farmer_id, checked_in_at AS at, true AS check_in
    FROM check_ins
    WHERE cooling_unit_id = ANY($1::int[])
      AND checked_in_at >= (SELECT lo FROM span) AND checked_in_at < (SELECT hi FROM span)
    UNION ALL
    SELECT cooling_unit_id, farmer_id, checked_out_at, false
    FROM check_outs
    WHERE cooling_unit_id = ANY($1::int[])
      AND checked_out_at >= (SELECT lo FROM span) AND checked_out_at < (SELECT hi FROM span)
  ) m
  JOIN bucket_day bd ON bd.day = (m.at AT TIME ZONE 'UTC')::date
),
activity AS (
  SELECT period_start, count(DISTINCT farmer_id) AS active_users
  FROM movement
  GROUP BY period_start
),
unit_activity AS (
  SELECT period_start, cooling_unit_id,
         count(DISTINCT farmer_id) AS active_users,
         count(*) FILTER (WHERE check_in) AS check_ins,
         count(*) FILTER (WHERE NOT check_in) AS check_outs
  FROM movement
  GROUP BY period_start, cooling_unit_id
),
by_unit AS (
  SELECT b.period_start,
         json_agg(json_build_object(
           'cooling_unit_id', u.id,
           'active_users', coalesce(ua.active_users, 0),
           'check_ins', coalesce(ua.check_ins, 0),
           'check_outs', coalesce(ua.check_outs, 0)
         ) ORDER BY u.id) AS by_cooling_unit
  FROM bucket b
  CROSS JOIN unnest($1::int[]) AS u (id)
  LEFT JOIN unit_activity ua ON ua.period_start = b.period_start AND ua.cooling_unit_id = u.id
  GROUP BY b.period_start
)
SELECT to_char(b.period_start, 'YYYY-MM-DD') AS period_start,
       r.registered_users::int AS registered_users,
       coalesce(a.active_users, 0)::int AS active_users,
       r.sign_ups::int AS sign_ups,
       coalesce(bu.by_cooling_unit, '[]'::json) AS by_cooling_unit
FROM bucket b
JOIN registration r ON r.period_start = b.period_start
LEFT JOIN activity a ON a.period_start = b.period_start
LEFT JOIN by_unit bu ON bu.period_start = b.period_start
ORDER BY b.period_start;
