-- Up Migration
-- An impact page reads the market surveys taken during its days at its units. A survey knew its
-- unit only through its check-out, so the page found every survey the platform took in those days,
-- all companies' alike, and looked each one's check-out up to keep its own: a cost that grew with
-- the platform instead of the page.
-- Each survey now carries its check-out's unit, kept equal to it by the triggers below whoever
-- writes the rows, and the index on (unit, surveyed_at) finds the page's surveys directly
-- (sql/queries/analytics-impact.sql). It replaces the index on surveyed_at alone, which nothing
-- else reads.
ALTER TABLE market_surveys ADD COLUMN cooling_unit_id integer;
UPDATE market_surveys ms SET cooling_unit_id = co.cooling_unit_id FROM check_outs co WHERE co.id = ms.check_out_id;
ALTER TABLE market_surveys ALTER COLUMN cooling_unit_id SET NOT NULL;

-- a survey written (or moved to another check-out) takes its check-out's unit, whatever it was
-- given; FOR SHARE orders it with a move of that check-out in another transaction, as for crates
-- (migration 020)
CREATE FUNCTION market_surveys_take_check_out_unit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT co.cooling_unit_id INTO NEW.cooling_unit_id FROM check_outs co WHERE co.id = NEW.check_out_id FOR SHARE;
  -- said here, as the foreign key would say it: otherwise the empty unit's NOT NULL would
  IF NOT FOUND THEN
    RAISE foreign_key_violation USING MESSAGE = format('check-out %s does not exist (market_surveys.check_out_id)', NEW.check_out_id);
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER market_surveys_check_out_unit BEFORE INSERT OR UPDATE OF check_out_id, cooling_unit_id ON market_surveys
  FOR EACH ROW EXECUTE FUNCTION market_surveys_take_check_out_unit();

-- a check-out corrected to another unit takes its survey along
CREATE FUNCTION check_outs_move_surveys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE market_surveys SET cooling_unit_id = NEW.cooling_unit_id WHERE check_out_id = NEW.id;
  RETURN NULL;
END
$$;
CREATE TRIGGER check_outs_move_surveys AFTER UPDATE OF cooling_unit_id ON check_outs
  FOR EACH ROW WHEN (OLD.cooling_unit_id IS DISTINCT FROM NEW.cooling_unit_id) EXECUTE FUNCTION check_outs_move_surveys();

CREATE INDEX market_surveys_unit_time_idx ON market_surveys (cooling_unit_id, surveyed_at);
DROP INDEX market_surveys_surveyed_at_idx;

-- Down Migration
CREATE INDEX market_surveys_surveyed_at_idx ON market_surveys (surveyed_at);
DROP INDEX market_surveys_unit_time_idx;
DROP TRIGGER check_outs_move_surveys ON check_outs;
DROP FUNCTION check_outs_move_surveys();
DROP TRIGGER market_surveys_check_out_unit ON market_surveys;
DROP FUNCTION market_surveys_take_check_out_unit();
ALTER TABLE market_surveys DROP COLUMN cooling_unit_id;
