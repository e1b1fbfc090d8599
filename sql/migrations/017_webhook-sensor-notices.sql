-- Up Migration
-- sensor_data.changed (docs/webhooks.md), and one definition of a claimable delivery (below).
-- sensor_data.changed: an endpoint that wants it is told, at most once a
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

-- Whether a pending delivery may be sent at `at` (src/webhooks/dispatcher.ts claims only these,
-- and the queue's age counts only these): due, not leased by a live process, its endpoint enabled
-- and with fewer than `max_in_flight` deliveries under way, and no earlier pending delivery of the
-- same ordering key to the same endpoint (events of a key arrive in order). One definition for the
-- claim and the metric; both find the due rows by the due index first (status and time) and call
-- this on those only.
CREATE FUNCTION webhook_delivery_claimable(d webhook_deliveries, at timestamptz, max_in_flight integer) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT d.status = 'pending' AND d.next_attempt_at <= at
    AND (d.leased_until IS NULL OR d.leased_until < at)
    AND (SELECT e.disabled_at IS NULL FROM webhook_endpoints e WHERE e.id = d.endpoint_id)
    AND NOT EXISTS (
      SELECT 1 FROM webhook_deliveries earlier
      WHERE earlier.endpoint_id = d.endpoint_id AND earlier.ordering_key = d.ordering_key
        AND earlier.status = 'pending' AND earlier.id < d.id)
    AND (SELECT count(*) FROM webhook_deliveries busy
         WHERE busy.endpoint_id = d.endpoint_id AND busy.status = 'pending' AND busy.leased_until >= at) < max_in_flight
$$;

-- Down Migration
DROP FUNCTION webhook_delivery_claimable(webhook_deliveries, timestamptz, integer);
DROP TRIGGER webhook_endpoints_sensor_start ON webhook_endpoints;
DROP FUNCTION webhook_endpoint_sensor_start();
ALTER TABLE webhook_endpoints DROP COLUMN sensor_notified_at, DROP COLUMN sensor_position;
