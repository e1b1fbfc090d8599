-- Shared by both storage profiles (run first by ../003_sensor-store.js).
-- Which profile this database was migrated with, so the application and the maintenance functions
-- never have to guess: one row.
CREATE TABLE sensor_storage (
  singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  profile    text NOT NULL CHECK (profile IN ('timescale', 'postgres')),
  -- raw readings older than this are dropped (whole chunks or partitions); null keeps them all.
  -- The hourly and daily aggregates are kept either way.
  retention  interval CHECK (retention >= interval '30 days')
);

-- 001 created a plain table; no production data exists yet, so each profile recreates it.
-- The foreign key to cooling_units goes: it costs a lookup and a trigger per reading, and the
-- ingest checks each unit id once instead (src/sensors/ingest.ts).
DROP TABLE sensor_readings;

-- Response timestamps are text made by PostgreSQL: whole seconds unless the reading has a
-- fraction, so the text always round-trips to the exact stored instant (pagination seeks on it).
-- STABLE like to_char itself: that lets the planner inline it instead of calling it per row.
CREATE FUNCTION sensor_timestamp_text(at timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT to_char(at AT TIME ZONE 'UTC',
    CASE WHEN date_trunc('second', at) = at THEN 'YYYY-MM-DD"T"HH24:MI:SS"Z"' ELSE 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"' END)
$$;
