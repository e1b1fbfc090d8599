-- A page of hourly history (sql/queries/sensor-data.sql hourlyPage) is a few hundred rollup rows
-- of one unit that sit together on disk, but the planner prices a bitmap heap scan as if each row
-- were on a page of its own, so even a three-week window of one unit looked expensive enough for
-- a parallel plan: the view's two branches ran as a Parallel Append under a Gather Merge, and
-- starting the two workers cost more than the read itself, many times more on a busy server
-- (bench/sensor-hourly-floor.ts measures the route against a plain table of the same rows).
-- No setting of the table prevents that (an append of two branches may run in parallel even when
-- neither branch may be scanned in parallel), and a session setting would reach every other query
-- of the service. So the view declares itself serial: each branch's filter calls
-- sensor_serial_read(), marked PARALLEL UNSAFE, which makes the planner build no parallel plan for
-- any query that reads the view. The function is a constant true, inlined and folded away at
-- planning, so it costs nothing per row. Preferred to one scan unpivoted per row (LATERAL VALUES,
-- serial too), which rescans the VALUES for every rollup row and reads a unit's year more slowly.
CREATE FUNCTION sensor_serial_read() RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL UNSAFE
  AS 'SELECT true';

COMMENT ON FUNCTION sensor_serial_read() IS
  'Always true. Called by a view to keep every query that reads it serial (PARALLEL UNSAFE): see migration 014.';

CREATE OR REPLACE VIEW sensor_readings_hourly AS
  SELECT bucket, cooling_unit_id, 'TEMPERATURE'::specification_type AS specification_type,
         t_sum / t_count AS value, t_min AS min, t_max AS max, t_count AS sample_count
  FROM sensor_rollup_hourly WHERE t_count > 0 AND sensor_serial_read()
  UNION ALL
  SELECT bucket, cooling_unit_id, 'HUMIDITY'::specification_type, h_sum / h_count, h_min, h_max, h_count
  FROM sensor_rollup_hourly WHERE h_count > 0 AND sensor_serial_read();
