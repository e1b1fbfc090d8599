-- Impact rows for the page's buckets and units only, at the granularity workers/rollups/ needs:
-- one per crate checked in, per market survey, per farmer (docs/figures.md, "impact"). Every
-- query: $1 unit ids, $2 the page's days (ascending), $3 each day's bucket first day;
-- impactFarmers also $4 each day's bucket last day. Numerics leave as text so the arithmetic stays
-- exact; rows come back as JSON texts in the column order of the worker's row types, one text per
-- unit: a busy year's rows as one text were one large message, which node-pg reads into a buffer
-- doubled up to its size and then a string of it, three queries at once (as analytics-users.sql's
-- movements; bench P8). Buckets are found by the UTC day and scans are
-- bounded by constants (all as explained in revenue.sql).

-- name: impactCompany
SELECT currency::text AS currency, country::text AS country FROM companies WHERE id = $1;

-- name: impactCrates
-- Crates of check-ins in the bucket (UTC day of checked_in_at), with the crop's emission factors.
WITH day AS (
  SELECT * FROM unnest($2::date[], $3::date[]) AS d (day, period_start)
)
SELECT json_agg(json_build_array(
         to_char(day.period_start, 'YYYY-MM-DD'), ci.cooling_unit_id, ci.farmer_id, c.initial_weight_kg::text,
         crop.emission_factor_without_cooling::text, crop.emission_factor_with_cooling::text
       ))::text AS rows
FROM check_ins ci
JOIN day ON day.day = (ci.checked_in_at AT TIME ZONE 'UTC')::date
JOIN crates c ON c.check_in_id = ci.id
JOIN crops crop ON crop.id = c.crop_id
WHERE ci.cooling_unit_id = ANY($1::int[])
  AND ci.checked_in_at >= ($2::date[])[1]::timestamp AT TIME ZONE 'UTC'
  AND ci.checked_in_at < (($2::date[])[cardinality($2::date[])] + 1)::timestamp AT TIME ZONE 'UTC'
GROUP BY ci.cooling_unit_id;

-- name: impactSurveys
-- Market surveys taken in the bucket (UTC day of surveyed_at), at the unit and for the farmer of
-- the check-out each one follows (docs/figures.md, "Market surveys are dated when taken"); found
-- by the survey's copy of its check-out's unit (migration 021), which an index orders by time.
WITH day AS (
  SELECT * FROM unnest($2::date[], $3::date[]) AS d (day, period_start)
)
SELECT json_agg(json_build_array(
         to_char(day.period_start, 'YYYY-MM-DD'), co.cooling_unit_id, co.farmer_id, ms.currency,
         ms.selling_price_per_unit::text, ms.kg_per_unit::text, ms.kg_sold::text, ms.kg_lost::text
       ))::text AS rows
FROM market_surveys ms
JOIN day ON day.day = (ms.surveyed_at AT TIME ZONE 'UTC')::date
JOIN check_outs co ON co.id = ms.check_out_id
WHERE ms.cooling_unit_id = ANY($1::int[])
  AND ms.surveyed_at >= ($2::date[])[1]::timestamp AT TIME ZONE 'UTC'
  AND ms.surveyed_at < (($2::date[])[cardinality($2::date[])] + 1)::timestamp AT TIME ZONE 'UTC'
GROUP BY co.cooling_unit_id;

-- name: impactFarmers
-- The farmers of each bucket, each with the baseline survey that applies to the bucket: the latest
-- one surveyed before the bucket ends; when the farmer has none that early, their earliest (the
-- nearest to the bucket, and still the best picture of "before cold storage"). No baseline at
-- all: nulls. Served farmers (one row per distinct bucket, unit and farmer with a check-in or
-- check-out there) count in farmers_served; the farmers of the bucket's market surveys come too,
-- not served, for the baseline their income increase needs (a survey may be taken in a later
-- bucket than its check-out).
WITH day AS (
  SELECT d.day, d.period_start, (d.period_end + 1)::timestamp AT TIME ZONE 'UTC' AS span_end
  FROM unnest($2::date[], $3::date[], $4::date[]) AS d (day, period_start, period_end)
),
movement AS (
  SELECT day.period_start, day.span_end, ci.cooling_unit_id, ci.farmer_id
  FROM check_ins ci
  JOIN day ON day.day = (ci.checked_in_at AT TIME ZONE 'UTC')::date
  WHERE ci.cooling_unit_id = ANY($1::int[])
    AND ci.checked_in_at >= ($2::date[])[1]::timestamp AT TIME ZONE 'UTC'
    AND ci.checked_in_at < (($2::date[])[cardinality($2::date[])] + 1)::timestamp AT TIME ZONE 'UTC'
  UNION
  SELECT day.period_start, day.span_end, co.cooling_unit_id, co.farmer_id
  FROM check_outs co
  JOIN day ON day.day = (co.checked_out_at AT TIME ZONE 'UTC')::date
  WHERE co.cooling_unit_id = ANY($1::int[])
    AND co.checked_out_at >= ($2::date[])[1]::timestamp AT TIME ZONE 'UTC'
    AND co.checked_out_at < (($2::date[])[cardinality($2::date[])] + 1)::timestamp AT TIME ZONE 'UTC'
),
farmer AS (
  SELECT period_start, span_end, cooling_unit_id, farmer_id, true AS served FROM movement
  UNION ALL
  SELECT DISTINCT day.period_start, day.span_end, co.cooling_unit_id, co.farmer_id, false
  FROM market_surveys ms
  JOIN day ON day.day = (ms.surveyed_at AT TIME ZONE 'UTC')::date
  JOIN check_outs co ON co.id = ms.check_out_id
  WHERE ms.cooling_unit_id = ANY($1::int[])
    AND ms.surveyed_at >= ($2::date[])[1]::timestamp AT TIME ZONE 'UTC'
    AND ms.surveyed_at < (($2::date[])[cardinality($2::date[])] + 1)::timestamp AT TIME ZONE 'UTC'
)
-- the baseline is looked up per row (a farmer is rarely at two units in a bucket): a join of the
-- rows to their distinct (bucket, farmer) baselines made PostgreSQL misjudge both sides and loop
SELECT json_agg(json_build_array(
         to_char(f.period_start, 'YYYY-MM-DD'), f.cooling_unit_id, f.farmer_id, f.served,
         bl.loss_share::text, bl.currency, bl.average_price_per_kg::text
       ))::text AS rows
FROM farmer f
LEFT JOIN LATERAL (
  SELECT s.loss_share, s.currency, s.average_price_per_kg
  FROM baseline_surveys s
  WHERE s.farmer_id = f.farmer_id
  ORDER BY s.surveyed_at < f.span_end DESC,
           CASE WHEN s.surveyed_at < f.span_end THEN s.surveyed_at END DESC NULLS LAST,
           s.surveyed_at, s.id DESC
  LIMIT 1
) bl ON true
GROUP BY f.cooling_unit_id;
