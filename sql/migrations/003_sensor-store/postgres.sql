-- Sensor store, plain-PostgreSQL profile: what the timescale profile gets from TimescaleDB, built
-- from native features, behind the same relation names and columns:
--   sensor_readings          raw readings, range-partitioned by week
--   sensor_readings_hourly   view: bucket, cooling_unit_id, specification_type, value (mean), min, max, sample_count
--   sensor_readings_daily    view: the same per UTC day, plus hour_count (hours with readings)
-- The rollups are exact and current: a statement-level trigger folds every inserted batch into
-- them in the same transaction (duplicates never reach it: ON CONFLICT DO NOTHING, or the
-- ingest's duplicate-free fast path, drops them first), and updates or deletes recompute the
-- buckets they touch.

-- Weekly partitions: ~2M readings a day is ~14M rows (~1.3 GB with the primary key) a week. Few
-- enough partitions (52 a year) that planning and locking over a year's window stay cheap, small
-- enough that the hot partition's index stays in memory and retention drops whole weeks.
CREATE TABLE sensor_readings (
  cooling_unit_id     integer NOT NULL,
  specification_type  specification_type NOT NULL,
  recorded_at         timestamptz NOT NULL,
  value               double precision NOT NULL,
  -- one reading per unit, type and instant (docs/contract.md, "Records"); unit first: most reads are per unit
  PRIMARY KEY (cooling_unit_id, specification_type, recorded_at)
) PARTITION BY RANGE (recorded_at);

-- Safety net for a reading outside every weekly partition (a writer that skipped
-- sensor_prepare_range): it lands here instead of failing, and moves to its week's partition
-- when that partition is created.
CREATE TABLE sensor_readings_default PARTITION OF sensor_readings DEFAULT;

-- The rollups keep sums, not means, so folding a batch in is plain addition. One row per unit and
-- bucket with both types side by side (t_ = TEMPERATURE, h_ = HUMIDITY): half the rows to write
-- per batch, which is most of the cost of keeping them current; the views below unpivot them.
-- min/max are null, and count 0, for a type with no reading in the bucket.
CREATE TABLE sensor_rollup_hourly (
  bucket           timestamptz NOT NULL,
  cooling_unit_id  integer NOT NULL,
  t_sum            double precision NOT NULL,
  t_min            double precision,
  t_max            double precision,
  t_count          integer NOT NULL,
  h_sum            double precision NOT NULL,
  h_min            double precision,
  h_max            double precision,
  h_count          integer NOT NULL,
  -- not a covering index (INCLUDE the sums): index-only reads of a unit's year would be faster,
  -- but the wider index costs ~40% more per batch folded in, and ingest is the hotter path
  PRIMARY KEY (cooling_unit_id, bucket)
);

CREATE TABLE sensor_rollup_daily (
  bucket           timestamptz NOT NULL,
  cooling_unit_id  integer NOT NULL,
  t_sum            double precision NOT NULL,
  t_min            double precision,
  t_max            double precision,
  t_count          integer NOT NULL,
  -- hours of the day with readings of the type: an hourly history's total_count without
  -- touching the hourly rollup
  t_hours          integer NOT NULL,
  h_sum            double precision NOT NULL,
  h_min            double precision,
  h_max            double precision,
  h_count          integer NOT NULL,
  h_hours          integer NOT NULL,
  PRIMARY KEY (cooling_unit_id, bucket) INCLUDE (t_sum, t_min, t_max, t_count, t_hours, h_sum, h_min, h_max, h_count, h_hours)
);

-- One branch per type (not a LATERAL unpivot): each is an index-only range scan, and a filter
-- on specification_type drops the other branch at planning time.
CREATE VIEW sensor_readings_hourly AS
  SELECT bucket, cooling_unit_id, 'TEMPERATURE'::specification_type AS specification_type,
         t_sum / t_count AS value, t_min AS min, t_max AS max, t_count AS sample_count
  FROM sensor_rollup_hourly WHERE t_count > 0
  UNION ALL
  SELECT bucket, cooling_unit_id, 'HUMIDITY'::specification_type, h_sum / h_count, h_min, h_max, h_count
  FROM sensor_rollup_hourly WHERE h_count > 0;

CREATE VIEW sensor_readings_daily AS
  SELECT bucket, cooling_unit_id, 'TEMPERATURE'::specification_type AS specification_type,
         t_sum / t_count AS value, t_min AS min, t_max AS max, t_count AS sample_count, t_hours AS hour_count
  FROM sensor_rollup_daily WHERE t_count > 0
  UNION ALL
  SELECT bucket, cooling_unit_id, 'HUMIDITY'::specification_type, h_sum / h_count, h_min, h_max, h_count, h_hours
  FROM sensor_rollup_daily WHERE h_count > 0;

-- Folds an inserted batch (the transition table new_readings) into both rollups: hours that
-- exist grow, the others are inserted, and each day learns how many of its hours are new (an
-- hour is new for a type when its count after the update is the batch's own). Plain inserts, not
-- upserts, for the hours: on a batch of fresh readings that halves the cost. If a concurrent
-- batch created one of the same hours first, the statement fails with a unique violation and is
-- redone holding a lock that makes it see that hour (only then are rollup writers serialised).
CREATE FUNCTION sensor_rollups_add() RETURNS trigger
LANGUAGE plpgsql SET work_mem = '64MB' AS $$
BEGIN
  FOR attempt IN 1..2 LOOP
    BEGIN
      IF attempt = 2 THEN
        LOCK TABLE sensor_rollup_hourly IN SHARE ROW EXCLUSIVE MODE;
      END IF;
      WITH delta AS MATERIALIZED (
        -- date_bin: UTC hours by arithmetic, whatever the session's time zone
        SELECT date_bin('1 hour', recorded_at, '2000-01-01 00:00:00+00') AS bucket, cooling_unit_id,
          coalesce(sum(value) FILTER (WHERE specification_type = 'TEMPERATURE'), 0) AS t_sum,
          min(value) FILTER (WHERE specification_type = 'TEMPERATURE') AS t_min,
          max(value) FILTER (WHERE specification_type = 'TEMPERATURE') AS t_max,
          count(*) FILTER (WHERE specification_type = 'TEMPERATURE')::integer AS t_count,
          coalesce(sum(value) FILTER (WHERE specification_type = 'HUMIDITY'), 0) AS h_sum,
          min(value) FILTER (WHERE specification_type = 'HUMIDITY') AS h_min,
          max(value) FILTER (WHERE specification_type = 'HUMIDITY') AS h_max,
          count(*) FILTER (WHERE specification_type = 'HUMIDITY')::integer AS h_count
        FROM new_readings
        GROUP BY 1, 2
      ), grown AS (
        UPDATE sensor_rollup_hourly h SET
          t_sum = h.t_sum + x.t_sum, t_min = least(h.t_min, x.t_min), t_max = greatest(h.t_max, x.t_max),
          t_count = h.t_count + x.t_count,
          h_sum = h.h_sum + x.h_sum, h_min = least(h.h_min, x.h_min), h_max = greatest(h.h_max, x.h_max),
          h_count = h.h_count + x.h_count
        FROM delta x
        WHERE (h.cooling_unit_id, h.bucket) = (x.cooling_unit_id, x.bucket)
        RETURNING h.bucket, h.cooling_unit_id, h.t_count, h.h_count
      ), created AS (
        INSERT INTO sensor_rollup_hourly (bucket, cooling_unit_id, t_sum, t_min, t_max, t_count, h_sum, h_min, h_max, h_count)
        SELECT x.bucket, x.cooling_unit_id, x.t_sum, x.t_min, x.t_max, x.t_count, x.h_sum, x.h_min, x.h_max, x.h_count
        FROM delta x
        WHERE NOT EXISTS (SELECT FROM grown g WHERE (g.cooling_unit_id, g.bucket) = (x.cooling_unit_id, x.bucket))
      )
      INSERT INTO sensor_rollup_daily AS d
        (bucket, cooling_unit_id, t_sum, t_min, t_max, t_count, t_hours, h_sum, h_min, h_max, h_count, h_hours)
      SELECT date_bin('1 day', x.bucket, '2000-01-01 00:00:00+00'), x.cooling_unit_id,
        sum(x.t_sum), min(x.t_min), max(x.t_max), sum(x.t_count)::integer,
        count(*) FILTER (WHERE x.t_count > 0 AND (g.t_count IS NULL OR g.t_count = x.t_count))::integer,
        sum(x.h_sum), min(x.h_min), max(x.h_max), sum(x.h_count)::integer,
        count(*) FILTER (WHERE x.h_count > 0 AND (g.h_count IS NULL OR g.h_count = x.h_count))::integer
      FROM delta x LEFT JOIN grown g USING (bucket, cooling_unit_id)
      GROUP BY 1, 2
      -- index order: concurrent batches lock shared days in the same order
      ORDER BY 2, 1
      ON CONFLICT (cooling_unit_id, bucket) DO UPDATE SET
        t_sum = d.t_sum + excluded.t_sum, t_min = least(d.t_min, excluded.t_min), t_max = greatest(d.t_max, excluded.t_max),
        t_count = d.t_count + excluded.t_count, t_hours = d.t_hours + excluded.t_hours,
        h_sum = d.h_sum + excluded.h_sum, h_min = least(d.h_min, excluded.h_min), h_max = greatest(d.h_max, excluded.h_max),
        h_count = d.h_count + excluded.h_count, h_hours = d.h_hours + excluded.h_hours;
      RETURN NULL;
    EXCEPTION WHEN unique_violation THEN
      IF attempt = 2 THEN RAISE; END IF;
    END;
  END LOOP;
  RETURN NULL;
END $$;

-- Recomputes the given (unit, hour) buckets, and the days holding them, from the readings:
-- after an update or delete a min or max can only be found again by looking.
CREATE FUNCTION sensor_rollups_rebuild(units integer[], hours timestamptz[]) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM sensor_rollup_hourly h
  USING unnest(units, hours) AS k (cooling_unit_id, bucket)
  WHERE (h.cooling_unit_id, h.bucket) = (k.cooling_unit_id, k.bucket);

  INSERT INTO sensor_rollup_hourly (bucket, cooling_unit_id, t_sum, t_min, t_max, t_count, h_sum, h_min, h_max, h_count)
  SELECT k.bucket, k.cooling_unit_id,
    coalesce(sum(r.value) FILTER (WHERE r.specification_type = 'TEMPERATURE'), 0),
    min(r.value) FILTER (WHERE r.specification_type = 'TEMPERATURE'),
    max(r.value) FILTER (WHERE r.specification_type = 'TEMPERATURE'),
    count(*) FILTER (WHERE r.specification_type = 'TEMPERATURE'),
    coalesce(sum(r.value) FILTER (WHERE r.specification_type = 'HUMIDITY'), 0),
    min(r.value) FILTER (WHERE r.specification_type = 'HUMIDITY'),
    max(r.value) FILTER (WHERE r.specification_type = 'HUMIDITY'),
    count(*) FILTER (WHERE r.specification_type = 'HUMIDITY')
  FROM unnest(units, hours) AS k (cooling_unit_id, bucket)
  JOIN sensor_readings r ON r.cooling_unit_id = k.cooling_unit_id
    AND r.recorded_at >= k.bucket AND r.recorded_at < k.bucket + interval '1 hour'
  GROUP BY 1, 2;

  DELETE FROM sensor_rollup_daily d
  USING unnest(units, hours) AS k (cooling_unit_id, bucket)
  WHERE (d.cooling_unit_id, d.bucket) = (k.cooling_unit_id, date_bin('1 day', k.bucket, '2000-01-01 00:00:00+00'));

  INSERT INTO sensor_rollup_daily (bucket, cooling_unit_id, t_sum, t_min, t_max, t_count, t_hours, h_sum, h_min, h_max, h_count, h_hours)
  SELECT k.bucket, k.cooling_unit_id,
    sum(h.t_sum), min(h.t_min), max(h.t_max), sum(h.t_count), count(*) FILTER (WHERE h.t_count > 0),
    sum(h.h_sum), min(h.h_min), max(h.h_max), sum(h.h_count), count(*) FILTER (WHERE h.h_count > 0)
  FROM (
    SELECT DISTINCT cooling_unit_id, date_bin('1 day', bucket, '2000-01-01 00:00:00+00') AS bucket
    FROM unnest(units, hours) AS k (cooling_unit_id, bucket)
  ) k
  JOIN sensor_rollup_hourly h ON h.cooling_unit_id = k.cooling_unit_id
    AND h.bucket >= k.bucket AND h.bucket < k.bucket + interval '1 day'
  GROUP BY 1, 2;
END $$;

CREATE FUNCTION sensor_rollups_after_delete() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM sensor_rollups_rebuild(array_agg(cooling_unit_id), array_agg(bucket))
  FROM (SELECT DISTINCT cooling_unit_id, date_bin('1 hour', recorded_at, '2000-01-01 00:00:00+00') AS bucket FROM old_readings) k
  HAVING count(*) > 0;
  RETURN NULL;
END $$;

CREATE FUNCTION sensor_rollups_after_update() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM sensor_rollups_rebuild(array_agg(cooling_unit_id), array_agg(bucket))
  FROM (
    SELECT cooling_unit_id, date_bin('1 hour', recorded_at, '2000-01-01 00:00:00+00') AS bucket FROM old_readings
    UNION
    SELECT cooling_unit_id, date_bin('1 hour', recorded_at, '2000-01-01 00:00:00+00') FROM new_readings
  ) k
  HAVING count(*) > 0;
  RETURN NULL;
END $$;

CREATE FUNCTION sensor_rollups_truncate() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE sensor_rollup_hourly, sensor_rollup_daily;
  RETURN NULL;
END $$;

-- Statement-level with transition tables: one aggregation per batch, not one per reading.
CREATE TRIGGER sensor_rollups_insert AFTER INSERT ON sensor_readings
  REFERENCING NEW TABLE AS new_readings FOR EACH STATEMENT EXECUTE FUNCTION sensor_rollups_add();
CREATE TRIGGER sensor_rollups_delete AFTER DELETE ON sensor_readings
  REFERENCING OLD TABLE AS old_readings FOR EACH STATEMENT EXECUTE FUNCTION sensor_rollups_after_delete();
CREATE TRIGGER sensor_rollups_update AFTER UPDATE ON sensor_readings
  REFERENCING OLD TABLE AS old_readings NEW TABLE AS new_readings FOR EACH STATEMENT EXECUTE FUNCTION sensor_rollups_after_update();
CREATE TRIGGER sensor_rollups_truncate AFTER TRUNCATE ON sensor_readings
  FOR EACH STATEMENT EXECUTE FUNCTION sensor_rollups_truncate();

-- Nothing is ever late for exact rollups: the ingest's refresh step has nothing to do here.
CREATE FUNCTION sensor_stale_aggregates(from_at timestamptz, to_at timestamptz)
RETURNS TABLE (aggregate text, window_start timestamptz, window_end timestamptz)
LANGUAGE sql STABLE AS $$ SELECT NULL::text, NULL::timestamptz, NULL::timestamptz WHERE false $$;
