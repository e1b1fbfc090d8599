-- Up Migration
-- Every process caches which units each company may read (src/data-surface/authorize.ts). A
-- unit added, moved to another company or location, or soft-deleted must stop (or start) being
-- readable at once on every process: each change announces the companies it touches on the
-- channel `coldtrack_unit_directory`, delivered when the change commits, and each process drops
-- those companies' entries when the notification arrives.
CREATE FUNCTION cooling_units_announce() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM pg_notify('coldtrack_unit_directory', OLD.company_id::text);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND (TG_OP = 'INSERT' OR NEW.company_id IS DISTINCT FROM OLD.company_id) THEN
    PERFORM pg_notify('coldtrack_unit_directory', NEW.company_id::text);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER cooling_units_announce
  AFTER INSERT OR DELETE OR UPDATE OF company_id, location_id, deleted ON cooling_units
  FOR EACH ROW EXECUTE FUNCTION cooling_units_announce();

-- Down Migration
DROP TRIGGER cooling_units_announce ON cooling_units;
DROP FUNCTION cooling_units_announce();
