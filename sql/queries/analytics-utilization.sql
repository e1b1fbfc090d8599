-- name: utilization
-- Figures per (period bucket, cooling unit) for the page's buckets and units only
-- (docs/figures.md, "utilization"). $1 unit ids, $2 bucket first days (ascending), $3 bucket last
-- days (inclusive), $4 now, $5 each unit's deletion instant (null for a live unit), parallel to $1.
-- A cell's elapsed part runs from the bucket's start to its end, now, or the unit's deletion,
-- whichever comes first. Occupancy is time-averaged over that part (the crate-seconds each crate
-- spent in the unit, over its length) and the stock is taken at its end; a cell with no elapsed
-- part (a bucket that has not begun) has neither: null. Movements count what was recorded in the
-- bucket. Rates are rounded once, half up, from exact integers of microseconds (numeric div).
WITH bucket AS (
  SELECT b.period_start,
         b.period_start::timestamp AT TIME ZONE 'UTC' AS span_start,
         (b.period_end + 1)::timestamp AT TIME ZONE 'UTC' AS span_end
  FROM unnest($2::date[], $3::date[]) AS b (period_start, period_end)
),
cell AS (
  SELECT b.period_start, b.span_start, b.span_end, u.id AS cooling_unit_id, u.capacity_crates,
         greatest(b.span_start, least(b.span_end, $4::timestamptz, coalesce(r.deleted_at, 'infinity'))) AS elapsed_end
  FROM bucket b
  CROSS JOIN unnest($1::int[], $5::timestamptz[]) AS r (id, deleted_at)
  JOIN cooling_units u ON u.id = r.id
),
-- crates in the unit at some instant of the page: their stays overlap the page's days (a GiST
-- index answers it, sql/migrations/020_crate-stays.sql; the bounds are constants, so the planner
-- sizes the page, not the table)
crate_stay AS MATERIALIZED (
  SELECT c.id, c.cooling_unit_id, c.initial_weight_kg, c.checked_in_at AS arrived,
         coalesce(c.fully_checked_out_at, 'infinity') AS departed
  FROM crates c
  WHERE c.cooling_unit_id = ANY($1::int[])
    AND crate_stay_range(c.checked_in_at, c.fully_checked_out_at)
        && tstzrange(($2::date[])[1]::timestamp AT TIME ZONE 'UTC', (($3::date[])[cardinality($3::date[])] + 1)::timestamp AT TIME ZONE 'UTC')
),
occupancy AS (
  SELECT c.period_start, c.cooling_unit_id,
         sum(greatest(0, extract(epoch FROM least(s.departed, c.elapsed_end) - greatest(s.arrived, c.span_start)))) AS crate_seconds,
         count(*) FILTER (WHERE s.departed >= c.elapsed_end) AS crates_at_end,
         sum(s.initial_weight_kg - coalesce(taken.kg, 0)) FILTER (WHERE s.departed >= c.elapsed_end) AS kg_at_end
  FROM cell c
  JOIN crate_stay s ON s.cooling_unit_id = c.cooling_unit_id AND s.arrived < c.elapsed_end AND s.departed > c.span_start
  LEFT JOIN LATERAL (
    SELECT sum(cc.weight_kg) AS kg
    FROM crate_check_outs cc JOIN check_outs co ON co.id = cc.check_out_id
    WHERE cc.crate_id = s.id AND co.checked_out_at < c.elapsed_end AND s.departed >= c.elapsed_end
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
    AND ci.checked_in_at >= ($2::date[])[1]::timestamp AT TIME ZONE 'UTC'
    AND ci.checked_in_at < (($3::date[])[cardinality($3::date[])] + 1)::timestamp AT TIME ZONE 'UTC'
  GROUP BY 1, 2
),
departures AS (
  SELECT b.period_start, co.cooling_unit_id,
         count(DISTINCT co.id) AS check_outs, sum(cc.percentage) * 0.01 AS crates_checked_out,
         sum(cc.weight_kg) AS kg_checked_out
  FROM bucket b
  JOIN check_outs co ON co.checked_out_at >= b.span_start AND co.checked_out_at < b.span_end
  JOIN crate_check_outs cc ON cc.check_out_id = co.id
  WHERE co.cooling_unit_id = ANY($1::int[])
    AND co.checked_out_at >= ($2::date[])[1]::timestamp AT TIME ZONE 'UTC'
    AND co.checked_out_at < (($3::date[])[cardinality($3::date[])] + 1)::timestamp AT TIME ZONE 'UTC'
  GROUP BY 1, 2
),
movement AS (
  SELECT cooling_unit_id, farmer_id, checked_in_at AS at
  FROM check_ins
  WHERE cooling_unit_id = ANY($1::int[])
    AND checked_in_at >= ($2::date[])[1]::timestamp AT TIME ZONE 'UTC'
    AND checked_in_at < (($3::date[])[cardinality($3::date[])] + 1)::timestamp AT TIME ZONE 'UTC'
  UNION ALL
  SELECT cooling_unit_id, farmer_id, checked_out_at
  FROM check_outs
  WHERE cooling_unit_id = ANY($1::int[])
    AND checked_out_at >= ($2::date[])[1]::timestamp AT TIME ZONE 'UTC'
    AND checked_out_at < (($3::date[])[cardinality($3::date[])] + 1)::timestamp AT TIME ZONE 'UTC'
),
farmers AS (
  SELECT b.period_start, m.cooling_unit_id, count(DISTINCT m.farmer_id) AS active_users
  FROM bucket b JOIN movement m ON m.at >= b.span_start AND m.at < b.span_end
  GROUP BY 1, 2
)
SELECT to_char(c.period_start, 'YYYY-MM-DD') AS period_start,
       c.cooling_unit_id,
       c.capacity_crates,
       -- round half up to 4 decimals of crate-seconds / elapsed seconds (/ capacity), in microseconds:
       -- floor((2 * 10^4 * a + b) / 2b) / 10^4 is exact where round() of a rounded quotient is not
       CASE WHEN elapsed.us > 0
         THEN (div(coalesce(o.crate_seconds, 0) * 20000000000 + elapsed.us, 2 * elapsed.us) * 0.0001)::float8
       END AS average_crates_in_storage,
       CASE WHEN elapsed.us > 0
         THEN (div(coalesce(o.crate_seconds, 0) * 20000000000 + elapsed.us * c.capacity_crates, 2 * elapsed.us * c.capacity_crates) * 0.0001)::float8
       END AS utilization_rate,
       CASE WHEN elapsed.us > 0 THEN coalesce(o.crates_at_end, 0)::int END AS crates_in_storage,
       CASE WHEN elapsed.us > 0 THEN coalesce(o.kg_at_end, 0)::float8 END AS kg_in_storage,
       coalesce(a.check_ins, 0)::int AS check_ins,
       coalesce(d.check_outs, 0)::int AS check_outs,
       coalesce(a.crates_checked_in, 0)::int AS crates_checked_in,
       coalesce(a.kg_checked_in, 0)::float8 AS kg_checked_in,
       round(coalesce(d.crates_checked_out, 0), 2)::float8 AS crates_checked_out,
       coalesce(d.kg_checked_out, 0)::float8 AS kg_checked_out,
       coalesce(f.active_users, 0)::int AS active_users
FROM cell c
CROSS JOIN LATERAL (SELECT extract(epoch FROM c.elapsed_end - c.span_start) * 1000000 AS us) elapsed
LEFT JOIN occupancy o ON o.period_start = c.period_start AND o.cooling_unit_id = c.cooling_unit_id
LEFT JOIN arrivals a ON a.period_start = c.period_start AND a.cooling_unit_id = c.cooling_unit_id
LEFT JOIN departures d ON d.period_start = c.period_start AND d.cooling_unit_id = c.cooling_unit_id
LEFT JOIN farmers f ON f.period_start = c.period_start AND f.cooling_unit_id = c.cooling_unit_id;
