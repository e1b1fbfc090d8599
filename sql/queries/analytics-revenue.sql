-- Revenue rows for the page's buckets and units only, rolled up by workers/rollups/.
-- - Money leaves as text (numeric's exact decimal form); sums are done in integer cents.
-- - The rows come back as one JSON text, an array of arrays in the column order of CheckOutRow:
--   the event loop only decodes one string and hands it to a worker thread, where it is parsed
--   and rolled up (building and cloning row objects on the main thread cost more than the rollup).
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
SELECT coalesce(json_agg(json_build_array(
         to_char(day.period_start, 'YYYY-MM-DD'), co.cooling_unit_id, co.currency,
         co.cooling_fees::text, co.discount::text, co.paid, co.payment_method
       )), '[]')::text AS rows
FROM check_outs co
JOIN day ON day.day = (co.checked_out_at AT TIME ZONE 'UTC')::date
WHERE co.cooling_unit_id = ANY($1::int[])
  AND co.checked_out_at >= ($2::date[])[1]::timestamp AT TIME ZONE 'UTC'
  AND co.checked_out_at < (($2::date[])[cardinality($2::date[])] + 1)::timestamp AT TIME ZONE 'UTC'
  AND ($4::text = 'all' OR co.paid = ($4::text = 'paid'));
