-- Up Migration
-- The change feed (GET /api/v1/sensor-data/changes, src/sensors/changes.ts): which spans of which
-- unit's history each ingest load added to, so a partner re-reads only those instead of the whole
-- history. The same for both storage profiles: it names readings, not how they are stored.
--
-- A change is one span of new readings of one (unit, specification type) that one load committed:
-- its first and last reading instants and how many readings. Readings of a load lie in one span
-- while no two consecutive ones are more than an hour apart, so every hour (and day) between
-- first_at and last_at gained a reading; a scattered load is bounded to a few spans per unit and
-- type (src/sensors/change-spans.ts), whose hours may then include some that did not change.
--
-- Order: a reader resumes after the last id it saw, so ids must become visible in id order. A
-- sequence alone does not promise that (two loads draw 7 and 8; 8 commits first, a reader passes
-- it, then 7 commits behind the reader's position and is never seen). sensor_changes_record takes
-- a lock on this table that only another recording conflicts with, draws its ids under it and
-- keeps it to its commit: the next load draws its ids only after this one's are visible, on the
-- primary and on a replica (commits replay in order). It is the load's last statement, so the
-- lock is held only for the commit itself; readers take no lock.
CREATE TABLE sensor_changes (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  cooling_unit_id     integer NOT NULL,
  specification_type  specification_type NOT NULL,
  first_at            timestamptz NOT NULL,
  last_at             timestamptz NOT NULL,
  readings            integer NOT NULL CHECK (readings > 0),
  -- when the load committed (as near as a statement can tell: under the lock, so in id order)
  landed_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
  CHECK (first_at <= last_at)
);
-- a token limited to a few units, or a cooling_unit_id filter, seeks its own units' changes
CREATE INDEX sensor_changes_unit ON sensor_changes (cooling_unit_id, id);
-- pruning finds the changes past the retention window
CREATE INDEX sensor_changes_landed ON sensor_changes (landed_at);

-- What the feed no longer holds: every change with an id up to pruned_through is gone, so a
-- cursor before it cannot be resumed (410 cursor_expired). And the key that signs cursors: one
-- per database, so every process and replica accepts the cursors of every other, across restarts.
CREATE TABLE sensor_changes_state (
  singleton       boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  pruned_through  bigint NOT NULL DEFAULT 0,
  -- 256 random bits (gen_random_uuid draws from the server's strong random source)
  cursor_key      bytea NOT NULL DEFAULT decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex')
);
INSERT INTO sensor_changes_state DEFAULT VALUES;

-- One load's changes, in parallel arrays, recorded under the ordering lock described above.
CREATE FUNCTION sensor_changes_record(units integer[], types specification_type[], firsts timestamptz[], lasts timestamptz[],
                                      counts integer[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  LOCK TABLE sensor_changes IN SHARE ROW EXCLUSIVE MODE;
  INSERT INTO sensor_changes (cooling_unit_id, specification_type, first_at, last_at, readings)
  SELECT * FROM unnest(units, types, firsts, lasts, counts);
END
$$;

-- Forgets the changes that landed before `before` (the retention window, SENSOR_CHANGES_RETENTION_DAYS)
-- and remembers up to where; returns how many it removed. Ids and landed_at grow together (both are
-- set under the lock), so "landed before" is "id up to" the last such id.
CREATE FUNCTION sensor_changes_prune(before timestamptz) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  through bigint;
  removed bigint;
BEGIN
  SELECT max(id) INTO through FROM sensor_changes WHERE landed_at < before;
  IF through IS NULL THEN RETURN 0; END IF;
  UPDATE sensor_changes_state SET pruned_through = greatest(pruned_through, through);
  DELETE FROM sensor_changes WHERE id <= through;
  GET DIAGNOSTICS removed = ROW_COUNT;
  RETURN removed;
END
$$;

-- Down Migration
DROP FUNCTION sensor_changes_prune(timestamptz);
DROP FUNCTION sensor_changes_record(integer[], specification_type[], timestamptz[], timestamptz[], integer[]);
DROP TABLE sensor_changes_state;
DROP TABLE sensor_changes;
