-- Up Migration
-- A utilization page needs the crates that were in its units at some instant of its days: stays
-- that overlap a window. Only the check-in knew when a crate arrived, so no index could answer
-- that: every page read all of its units' crate history (bench/heavy-rollups, P5). Each crate now
-- carries its check-in's time, kept equal to it by the triggers below whoever writes the rows, and
-- a GiST index over (unit, stay) finds the overlapping stays directly
-- (sql/queries/analytics-utilization.sql). btree_gist puts the unit's equality in the same index;
-- it ships with PostgreSQL and is a trusted extension, so a database owner may create it.
CREATE EXTENSION IF NOT EXISTS btree_gist;

-- The instants a crate was in its unit: from its check-in to its full check-out, open while it is
-- stored. A full check-out recorded before the check-in (bad data) gives an empty stay rather than
-- refusing the platform's write.
CREATE FUNCTION crate_stay_range(arrived timestamptz, departed timestamptz) RETURNS tstzrange
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT tstzrange(arrived, CASE WHEN departed IS NULL THEN NULL ELSE greatest(arrived, departed) END) $$;

ALTER TABLE crates ADD COLUMN checked_in_at timestamptz;
UPDATE crates c SET checked_in_at = ci.checked_in_at FROM check_ins ci WHERE ci.id = c.check_in_id;
ALTER TABLE crates ALTER COLUMN checked_in_at SET NOT NULL;

-- a crate written (or moved to another check-in) takes its check-in's time, whatever it was given.
-- FOR SHARE orders it with a correction of that check-in in another transaction (the foreign key's
-- own lock does not conflict with one): a correction under way is waited for and its time taken,
-- and a later correction waits for this crate, then moves it (test/db/copied-parent-keys.test.ts)
CREATE FUNCTION crates_take_check_in_time() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT ci.checked_in_at INTO NEW.checked_in_at FROM check_ins ci WHERE ci.id = NEW.check_in_id FOR SHARE;
  -- said here, as the foreign key would say it: otherwise the empty time's NOT NULL would
  IF NOT FOUND THEN
    RAISE foreign_key_violation USING MESSAGE = format('check-in %s does not exist (crates.check_in_id)', NEW.check_in_id);
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER crates_check_in_time BEFORE INSERT OR UPDATE OF check_in_id, checked_in_at ON crates
  FOR EACH ROW EXECUTE FUNCTION crates_take_check_in_time();

-- a check-in whose time is corrected moves its crates' stays with it
CREATE FUNCTION check_ins_move_crates() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE crates SET checked_in_at = NEW.checked_in_at WHERE check_in_id = NEW.id;
  RETURN NULL;
END
$$;
CREATE TRIGGER check_ins_move_crates AFTER UPDATE OF checked_in_at ON check_ins
  FOR EACH ROW WHEN (OLD.checked_in_at IS DISTINCT FROM NEW.checked_in_at) EXECUTE FUNCTION check_ins_move_crates();

CREATE INDEX crates_unit_stay_idx ON crates USING gist (cooling_unit_id, crate_stay_range(checked_in_at, fully_checked_out_at));

-- Down Migration
DROP INDEX crates_unit_stay_idx;
DROP TRIGGER check_ins_move_crates ON check_ins;
DROP FUNCTION check_ins_move_crates();
DROP TRIGGER crates_check_in_time ON crates;
DROP FUNCTION crates_take_check_in_time();
ALTER TABLE crates DROP COLUMN checked_in_at;
DROP FUNCTION crate_stay_range(timestamptz, timestamptz);
-- btree_gist stays: other objects of the database may have come to use it
