-- Sensor store, postgres profile, part two: the upkeep TimescaleDB would do by itself. Weekly
-- partitions made ahead of need and retention by whole weeks (sensor_maintain), and compaction
-- of closed months of the rollups (sensor_compact). The application runs the first at start and
-- both every few hours (src/routes/sensor-data/history.ts), so no pg_cron is needed.

-- Makes sure every week of [from_at, to_at) has its partition (Monday 00:00 UTC, 7 days), and
-- returns them: the ingest COPYs each batch straight into its week's partitions. That is what
-- keeps ingest fast: PostgreSQL cannot batch a COPY's rows into a partitioned table that has a
-- transition-table trigger, but can into a partition, so every partition carries the same
-- statement trigger as the parent (a statement's triggers are those of the table it names, so a
-- reading is folded in exactly once either way). A new partition first takes over the rows the
-- default partition holds for its week; moving them fires no statement trigger, and the
-- rollups already count them.
CREATE FUNCTION sensor_prepare_range(from_at timestamptz, to_at timestamptz)
RETURNS TABLE (target text, range_start timestamptz, range_end timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
  week timestamptz := date_trunc('week', from_at, 'UTC');
  partition text;
BEGIN
  IF to_at - from_at > interval '30 years' THEN
    RAISE EXCEPTION 'sensor_prepare_range: % .. % is not a plausible range of readings', from_at, to_at;
  END IF;
  WHILE week < to_at LOOP
    partition := 'sensor_readings_p' || to_char(week AT TIME ZONE 'UTC', 'YYYYMMDD');
    IF to_regclass(partition) IS NULL THEN
      -- serialises creators (app processes, ingest runs); re-check once the lock is ours
      PERFORM pg_advisory_xact_lock(hashtext('sensor_readings partitions'));
      IF to_regclass(partition) IS NULL THEN
        EXECUTE format('CREATE TABLE %I (LIKE sensor_readings INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', partition);
        EXECUTE format(
          'WITH moved AS (DELETE FROM sensor_readings_default WHERE recorded_at >= %L AND recorded_at < %L RETURNING *)
           INSERT INTO %I SELECT * FROM moved', week, week + interval '7 days', partition);
        EXECUTE format('ALTER TABLE sensor_readings ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
          partition, week, week + interval '7 days');
        EXECUTE format('CREATE TRIGGER sensor_rollups_insert AFTER INSERT ON %I
          REFERENCING NEW TABLE AS new_readings FOR EACH STATEMENT EXECUTE FUNCTION sensor_rollups_add()', partition);
      END IF;
    END IF;
    target := partition;
    range_start := week;
    range_end := week + interval '7 days';
    RETURN NEXT;
    week := week + interval '7 days';
  END LOOP;
END $$;

-- Compaction: rollup rows are written batch by batch, every unit's hour next to every other
-- unit's, so one unit's year of hours ends up on ~8,760 different pages. Once a month is closed
-- (and its late readings in, a few days later) its rows are rewritten in (unit, bucket) order:
-- that year then sits on ~100 pages, which is what makes a partner's year of hourly history a
-- short read. What TimescaleDB's compression (segmented by unit) does for its chunks. The
-- rewrite is one statement, so readers see the month before or after, never half of it; late
-- readings still fold in afterwards (as rows outside the sorted run).
CREATE TABLE sensor_rollup_compacted (
  month         timestamptz PRIMARY KEY,
  compacted_at  timestamptz NOT NULL DEFAULT now()
);
-- rows arrive roughly in time order, so a BRIN index finds a month's rows for almost nothing
CREATE INDEX sensor_rollup_hourly_bucket_brin ON sensor_rollup_hourly USING brin (bucket);
CREATE INDEX sensor_rollup_daily_bucket_brin ON sensor_rollup_daily USING brin (bucket);

CREATE FUNCTION sensor_compact_rollups(from_at timestamptz) RETURNS bigint
LANGUAGE plpgsql SET work_mem = '256MB' AS $$
DECLARE
  rewritten bigint;
BEGIN
  WITH gone AS (
    DELETE FROM sensor_rollup_hourly WHERE bucket >= from_at AND bucket < from_at + interval '1 month' RETURNING *
  )
  INSERT INTO sensor_rollup_hourly SELECT * FROM gone ORDER BY cooling_unit_id, bucket;
  GET DIAGNOSTICS rewritten = ROW_COUNT;
  WITH gone AS (
    DELETE FROM sensor_rollup_daily WHERE bucket >= from_at AND bucket < from_at + interval '1 month' RETURNING *
  )
  INSERT INTO sensor_rollup_daily SELECT * FROM gone ORDER BY cooling_unit_id, bucket;
  INSERT INTO sensor_rollup_compacted AS c (month) VALUES (from_at)
  ON CONFLICT ON CONSTRAINT sensor_rollup_compacted_pkey DO UPDATE SET compacted_at = now();
  RETURN rewritten;
END $$;

-- Periodic upkeep, cheap enough for every start: partitions for the coming weeks exist before
-- the first reading needs them; with a retention configured, weeks entirely older than it are
-- dropped (the rollups keep their history). Returns how many partitions it dropped.
CREATE FUNCTION sensor_maintain(at timestamptz DEFAULT now()) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  kept interval := (SELECT retention FROM sensor_storage);
  old record;
  dropped integer := 0;
BEGIN
  PERFORM sensor_prepare_range(at - interval '1 week', at + interval '8 weeks');
  IF kept IS NOT NULL THEN
    FOR old IN
      SELECT c.relname
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'sensor_readings'::regclass AND c.relname ~ '^sensor_readings_p\d{8}$'
        AND (to_date(substr(c.relname, 18), 'YYYYMMDD')::timestamp AT TIME ZONE 'UTC') + interval '7 days' <= at - kept
    LOOP
      EXECUTE format('ALTER TABLE sensor_readings DETACH PARTITION %I', old.relname);
      EXECUTE format('DROP TABLE %I', old.relname);
      dropped := dropped + 1;
    END LOOP;
  END IF;
  RETURN dropped;
END $$;

-- Background upkeep: compacts up to `most` closed months not compacted yet (ended 3 days or
-- more before `at`, within ten years), oldest first, so one call stays bounded. Returns how many.
CREATE FUNCTION sensor_compact(at timestamptz DEFAULT now(), most integer DEFAULT 3) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  closed timestamptz;
  compacted integer := 0;
BEGIN
  -- one compactor at a time (every app process runs the upkeep); the others skip this round
  IF NOT pg_try_advisory_xact_lock(hashtext('sensor_compact')) THEN
    RETURN 0;
  END IF;
  FOR closed IN
    SELECT m FROM generate_series(date_trunc('month', at - interval '10 years', 'UTC'),
                                  date_trunc('month', at - interval '3 days', 'UTC') - interval '1 month', interval '1 month') m
    WHERE NOT EXISTS (SELECT FROM sensor_rollup_compacted c WHERE c.month = m)
      AND EXISTS (SELECT FROM sensor_rollup_daily d WHERE d.bucket >= m AND d.bucket < m + interval '1 month')
    ORDER BY m
    LIMIT most
  LOOP
    PERFORM sensor_compact_rollups(closed);
    compacted := compacted + 1;
  END LOOP;
  RETURN compacted;
END $$;

-- Partitions for the weeks around now: the demo seed and the first readings need no other step.
SELECT count(*) FROM sensor_prepare_range(now() - interval '5 weeks', now() + interval '8 weeks');
