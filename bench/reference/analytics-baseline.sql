-- The reference server's users and utilization queries: the project's as they were before its
-- figures changed (periods not begun, deleted units' history; sql/queries/analytics-*.sql, 2026-11-25).
-- The reference answers the same requests with a plain query each; it is a baseline for speed, not
-- a second source of the figures (the golden tests are).

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

-- name: utilization
-- Figures per (period bucket, cooling unit) for the page's buckets and units only.
-- $1 unit ids, $2 bucket first days, $3 bucket last days (inclusive), $4 now.
-- Occupancy is time-averaged: the crate-seconds each crate spent in the unit during the bucket,
-- over the bucket's length (up to now for a bucket that reaches into the future).
WITH bucket AS (
  SELECT b.period_start, b.period_end,
         b.period_start::timestamp AT TIME ZONE 'UTC' AS span_start,
         (b.period_end + 1)::timestamp AT TIME ZONE 'UTC' AS span_end,
         greatest(b.period_start::timestamp AT TIME ZONE 'UTC',
                  least((b.period_end + 1)::timestamp AT TIME ZONE 'UTC', $4::timestamptz)) AS elapsed_end
  FROM unnest($2::date[], $3::date[]) AS b (period_start, period_end)
),
crate_stay AS (
  SELECT c.id, c.cooling_unit_id, c.initial_weight_kg, ci.checked_in_at AS arrived,
         coalesce(c.fully_checked_out_at, 'infinity') AS departed
  FROM crates c
  JOIN check_ins ci ON ci.id = c.check_in_id
  WHERE c.cooling_unit_id = ANY($1::int[])
    AND ci.checked_in_at < (SELECT max(span_end) FROM bucket)
    AND (c.fully_checked_out_at IS NULL OR c.fully_checked_out_at > (SELECT min(span_start) FROM bucket))
),
occupancy AS (
  SELECT b.period_start, s.cooling_unit_id,
         sum(greatest(0, extract(epoch FROM least(s.departed, b.elapsed_end) - greatest(s.arrived, b.span_start)))) AS crate_seconds,
         count(*) FILTER (WHERE s.departed >= b.elapsed_end) AS crates_at_end,
         sum(s.initial_weight_kg - coalesce(taken.kg, 0)) FILTER (WHERE s.departed >= b.elapsed_end) AS kg_at_end
  FROM bucket b
  JOIN crate_stay s ON s.arrived < b.elapsed_end AND s.departed > b.span_start
  LEFT JOIN LATERAL (
    SELECT sum(cc.weight_kg) AS kg
    FROM crate_check_outs cc JOIN check_outs co ON co.id = cc.check_out_id
    WHERE cc.crate_id = s.id AND co.checked_out_at < b.elapsed_end AND s.departed >= b.elapsed_end
  ) taken ON true
  GROUP BY 1, 2
),
arrivals AS (
  SELECT b.period_start, ci.cooling_unit_id,
         count(DISTINCT ci.id) AS check_ins, count(c.id) AS crates_checked_in,
         sum(c.initial_weight_kg) AS kg_checked_in
  FROM bucket b
  JOIN check_ins ci ON ci.checked_in_at >= b.span_start AND ci.checked_in_at < b.span_end
  JOIN crates c ON c.check_in_id = ci.id
  WHERE ci.cooling_unit_id = ANY($1::int[])
  GROUP BY 1, 2
),
departures AS (
  SELECT b.period_start, co.cooling_unit_id,
         count(DISTINCT co.id) AS check_outs, sum(cc.percentage) / 100 AS crates_checked_out,
         sum(cc.weight_kg) AS kg_checked_out
  FROM bucket b
  JOIN check_outs co ON co.checked_out_at >= b.span_start AND co.checked_out_at < b.span_end
  JOIN crate_check_outs cc ON cc.check_out_id = co.id
  WHERE co.cooling_unit_id = ANY($1::int[])
  GROUP BY 1, 2
),
movement AS (
  SELECT cooling_unit_id, farmer_id, checked_in_at AS at FROM check_ins WHERE cooling_unit_id = ANY($1::int[])
  UNION ALL
  SELECT cooling_unit_id, farmer_id, checked_out_at FROM check_outs WHERE cooling_unit_id = ANY($1::int[])
),
farmers AS (
  SELECT b.period_start, m.cooling_unit_id, count(DISTINCT m.farmer_id) AS active_users
  FROM bucket b JOIN movement m ON m.at >= b.span_start AND m.at < b.span_end
  GROUP BY 1, 2
)
SELECT to_char(b.period_start, 'YYYY-MM-DD') AS period_start,
       u.id AS cooling_unit_id,
       u.capacity_crates,
       round(coalesce(o.crate_seconds / nullif(extract(epoch FROM b.elapsed_end - b.span_start), 0), 0)::numeric, 4)::float8
         AS average_crates_in_storage,
       round(coalesce(o.crate_seconds / nullif(extract(epoch FROM b.elapsed_end - b.span_start), 0) / u.capacity_crates, 0)::numeric, 4)::float8
         AS utilization_rate,
       coalesce(o.crates_at_end, 0)::int AS crates_in_storage,
       coalesce(o.kg_at_end, 0)::float8 AS kg_in_storage,
       coalesce(a.check_ins, 0)::int AS check_ins,
       coalesce(d.check_outs, 0)::int AS check_outs,
       coalesce(a.crates_checked_in, 0)::int AS crates_checked_in,
       coalesce(a.kg_checked_in, 0)::float8 AS kg_checked_in,
       round(coalesce(d.crates_checked_out, 0), 2)::float8 AS crates_checked_out,
       coalesce(d.kg_checked_out, 0)::float8 AS kg_checked_out,
       coalesce(f.active_users, 0)::int AS active_users
FROM bucket b
CROSS JOIN cooling_units u
LEFT JOIN occupancy o ON o.period_start = b.period_start AND o.cooling_unit_id = u.id
LEFT JOIN arrivals a ON a.period_start = b.period_start AND a.cooling_unit_id = u.id
LEFT JOIN departures d ON d.period_start = b.period_start AND d.cooling_unit_id = u.id
LEFT JOIN farmers f ON f.period_start = b.period_start AND f.cooling_unit_id = u.id
WHERE u.id = ANY($1::int[]);
