-- Revenue rows for the page's buckets and units only, rolled up by workers/rollups/ (a page of
-- at least INLINE_BELOW_UNIT_DAYS unit-days; a smaller one is written whole by revenuePageJson).
-- - Money leaves as text (numeric's exact decimal form); sums are done in integer cents.
-- - The rows come back as JSON texts, arrays of arrays in the column order of CheckOutRow, one
--   text per unit: a worker thread decodes a few strings, parses and rolls them up (building and
--   cloning row objects cost more than the rollup). One text for the whole page was one large
--   message that took longer to produce and read than the same rows a unit at a time (as
--   analytics-impact.sql's).
-- - A row finds its bucket by an equality join on its UTC day, against the page's days given with
--   each day's bucket (arrays of known length, so the planner knows their size), and the scan is
--   bounded by the page's first and last day written as constants, so the planner sizes the page,
--   not the table (a misestimate here made PostgreSQL JIT-compile every query for ~0.4 s).

-- name: revenueCheckOuts
-- One row per check-out; a check-out belongs to the bucket of its checked_out_at (UTC day).
-- $1 unit ids, $2 the page's days (ascending), $3 each day's bucket first day, $4 paid | pending | all.
WITH day AS (
  SELECT * FROM unnest($2::date[], $3::date[]) AS d (day, period_start)
)
SELECT json_agg(json_build_array(
         to_char(day.period_start, 'YYYY-MM-DD'), co.cooling_unit_id, co.currency,
         co.cooling_fees::text, co.discount::text, co.paid, co.payment_method
       ))::text AS rows
FROM check_outs co
JOIN day ON day.day = (co.checked_out_at AT TIME ZONE 'UTC')::date
WHERE co.cooling_unit_id = ANY($1::int[])
  AND co.checked_out_at >= ($2::date[])[1]::timestamp AT TIME ZONE 'UTC'
  AND co.checked_out_at < (($2::date[])[cardinality($2::date[])] + 1)::timestamp AT TIME ZONE 'UTC'
  AND ($4::text = 'all' OR co.paid = ($4::text = 'paid'))
GROUP BY co.cooling_unit_id;

-- name: revenuePageJson
-- A small page's records written as the response's JSON by PostgreSQL, as raw sensor pages are
-- (sensor-data.sql rawPageJson): the same figures as workers/rollups/revenue.ts, byte for byte
-- (test/routes/analytics/revenue.consistency.test.ts), without the rows crossing into JavaScript to
-- be parsed, summed and serialized again. Sums are numeric (exact); a figure is written as
-- float8out's shortest round-trip digits (extra_float_digits = 1, set by the pool), which are
-- JavaScript's for every amount below 10^15. `beyond_exact` counts the currency totals whose
-- cents pass 2^53, where the rollup refuses to answer: the caller rolls such a page up instead.
-- $1..$3 the page's cells in record order (unit, bucket first and last day), $4 the page's days
-- (ascending), $5 each day's bucket first day, $6 paid | pending | all.
-- Every parameter is read through a scalar subquery, so that no plan, custom or generic, sees
-- its value: the custom plans then cost what the generic one does, and PostgreSQL keeps the
-- generic plan after its first five executions instead of planning this query (longer to plan
-- than to run) on every request. A page is at most INLINE_BELOW_UNIT_DAYS unit-days: one plan
-- fits every page this query gets.
WITH day AS (
  SELECT * FROM unnest((SELECT $4::date[]), (SELECT $5::date[])) AS d (day, period_start)
), totals AS (
  -- one pass over the rows: per currency, and (paid check-outs only) per method and currency
  SELECT day.period_start, co.cooling_unit_id AS unit_id, co.currency::text COLLATE "C" AS currency,
         co.payment_method::text COLLATE "C" AS method, grouping(co.payment_method) = 1 AS per_currency,
         count(*) AS check_outs, count(*) FILTER (WHERE co.paid) AS paid_check_outs,
         sum(co.cooling_fees) AS fees, sum(co.discount) AS discounts,
         coalesce(sum(co.cooling_fees - co.discount) FILTER (WHERE co.paid), 0) AS paid,
         coalesce(sum(co.cooling_fees - co.discount) FILTER (WHERE NOT co.paid), 0) AS pending
  FROM check_outs co
  JOIN day ON day.day = (co.checked_out_at AT TIME ZONE 'UTC')::date
  WHERE co.cooling_unit_id = ANY ((SELECT $1::int[])::int[])
    AND co.checked_out_at >= (SELECT ($4::date[])[1]::timestamp AT TIME ZONE 'UTC')
    AND co.checked_out_at < (SELECT (($4::date[])[cardinality($4::date[])] + 1)::timestamp AT TIME ZONE 'UTC')
    AND ((SELECT $6::text) = 'all' OR co.paid = ((SELECT $6::text) = 'paid'))
  GROUP BY GROUPING SETS ((day.period_start, co.cooling_unit_id, co.currency),
                          (day.period_start, co.cooling_unit_id, co.payment_method, co.currency))
), cells AS (
  SELECT period_start, unit_id,
         sum(check_outs) FILTER (WHERE per_currency) AS check_outs,
         count(*) FILTER (WHERE per_currency AND fees * 100 > 9007199254740991) AS beyond_exact,
         string_agg(
           '{"currency":"' || currency || '","total_revenue":' || (fees - discounts)::float8 ||
           ',"paid_revenue":' || paid::float8 || ',"pending_revenue":' || pending::float8 ||
           ',"cooling_fees":' || fees::float8 || ',"discounts":' || discounts::float8 ||
           ',"check_outs":' || check_outs || ',"paid_check_outs":' || paid_check_outs ||
           ',"pending_check_outs":' || (check_outs - paid_check_outs) || '}',
           ',' ORDER BY currency) FILTER (WHERE per_currency) AS currencies,
         string_agg(
           '{"payment_method":' || coalesce('"' || method || '"', 'null') || ',"currency":"' || currency ||
           '","total_revenue":' || paid::float8 || ',"check_outs":' || paid_check_outs || '}',
           ',' ORDER BY method NULLS LAST, currency) FILTER (WHERE NOT per_currency AND paid_check_outs > 0) AS methods
  FROM totals
  GROUP BY period_start, unit_id
)
SELECT coalesce(sum(cells.beyond_exact), 0)::int AS beyond_exact,
       coalesce(string_agg(
         '{"cooling_unit_id":' || cell.unit_id || ',"period_start":"' || to_char(cell.period_start, 'YYYY-MM-DD') ||
         '","period_end":"' || to_char(cell.period_end, 'YYYY-MM-DD') || '","check_outs":' || coalesce(cells.check_outs, 0) ||
         ',"currency_totals":[' || coalesce(cells.currencies, '') || '],"payment_methods":[' || coalesce(cells.methods, '') || ']}',
         ',' ORDER BY cell.position), '') AS body
FROM unnest((SELECT $1::int[]), (SELECT $2::date[]), (SELECT $3::date[])) WITH ORDINALITY AS cell (unit_id, period_start, period_end, position)
LEFT JOIN cells ON cells.unit_id = cell.unit_id AND cells.period_start = cell.period_start;
