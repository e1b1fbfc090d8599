-- Demo sensor history: one TEMPERATURE and one HUMIDITY reading every 15 minutes for the 30 days
-- up to $5 (a 15-minute boundary), for each unit in $1.
-- A daily cycle (warmest mid-afternoon local time, when doors open most) plus noise taken from a
-- hash of (unit seed, instant), so the same seeds and clock always give the same readings.
--   $1 int[] unit ids, $2 int[] noise seeds, $3 float8[] mean temperature (C),
--   $4 float8[] hours from UTC, $5 timestamptz last reading
WITH units AS (
  SELECT *
  FROM unnest($1::int[], $2::int[], $3::float8[], $4::float8[])
    AS u (id, seed, base_temperature, utc_offset_hours)
),
moments AS (
  SELECT
    u.id,
    ts,
    u.base_temperature,
    sin(2 * pi() * ((extract(epoch FROM ts) / 3600 + u.utc_offset_hours - 9) / 24)) AS cycle,
    mod(extract(epoch FROM ts) / 3600 + u.utc_offset_hours::numeric, 24) BETWEEN 8 AND 17 AS working_hours,
    (hashtextextended(u.seed || ':' || extract(epoch FROM ts)::bigint, 1) & 1048575)::float8 / 1048576 AS noise_t,
    (hashtextextended(u.seed || ':' || extract(epoch FROM ts)::bigint, 2) & 1048575)::float8 / 1048576 AS noise_h,
    (hashtextextended(u.seed || ':' || extract(epoch FROM ts)::bigint, 3) & 1048575)::float8 / 1048576 AS door
  FROM units u
  CROSS JOIN generate_series($5::timestamptz - interval '30 days', $5::timestamptz, interval '15 minutes') AS ts
)
INSERT INTO sensor_readings (cooling_unit_id, specification_type, recorded_at, value)
SELECT m.id, r.kind, m.ts, r.value
FROM moments m
CROSS JOIN LATERAL (VALUES
  ('TEMPERATURE'::specification_type, round((
    m.base_temperature + 1.2 * m.cycle + 0.8 * (m.noise_t - 0.5)
    -- a door left open now and then during working hours
    + CASE WHEN m.working_hours AND m.door > 0.97 THEN 1 + 1.5 * m.noise_t ELSE 0 END
  )::numeric, 2)::float8),
  ('HUMIDITY'::specification_type, round(greatest(85, least(95,
    90 - 2.5 * m.cycle + 4 * (m.noise_h - 0.5)
  ))::numeric, 1)::float8)
) AS r (kind, value)
ON CONFLICT DO NOTHING;
