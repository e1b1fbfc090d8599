-- Up Migration
-- sensor_data.changed (docs/webhooks.md): an endpoint that wants it is told, at most once a
-- minute, that readings of its units landed, with the change feed's cursors that read them. Each
-- endpoint keeps how far into the feed it has been told (sensor_position: a change id) and when;
-- a new endpoint starts at the feed's head, so it is told of what lands after it was registered.
ALTER TABLE webhook_endpoints
  ADD COLUMN sensor_position bigint NOT NULL DEFAULT 0 CHECK (sensor_position >= 0),
  ADD COLUMN sensor_notified_at timestamptz;
UPDATE webhook_endpoints SET sensor_position = (SELECT coalesce(max(id), 0) FROM sensor_changes);

CREATE FUNCTION webhook_endpoint_sensor_start() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- the feed's head, as the pages compute it (max(id) reads the primary key's last entry)
  NEW.sensor_position := coalesce((SELECT max(id) FROM sensor_changes), (SELECT pruned_through FROM sensor_changes_state));
  RETURN NEW;
END $$;
CREATE TRIGGER webhook_endpoints_sensor_start BEFORE INSERT ON webhook_endpoints
  FOR EACH ROW EXECUTE FUNCTION webhook_endpoint_sensor_start();

-- Down Migration
DROP TRIGGER webhook_endpoints_sensor_start ON webhook_endpoints;
DROP FUNCTION webhook_endpoint_sensor_start();
ALTER TABLE webhook_endpoints DROP COLUMN sensor_notified_at, DROP COLUMN sensor_position;
