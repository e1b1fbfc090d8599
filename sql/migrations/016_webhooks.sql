-- Up Migration
-- Webhooks (docs/webhooks.md): a company's endpoints, the events written for them in the
-- transaction of the change they describe (an outbox), and each event's delivery to each endpoint
-- with its attempts. src/webhooks/ sends them; nothing here talks to the network.

CREATE TABLE webhook_endpoints (
  id                          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  company_id                  integer NOT NULL REFERENCES companies (id),
  url                         text NOT NULL CHECK (char_length(url) BETWEEN 1 AND 2048),
  description                 text NOT NULL DEFAULT '' CHECK (char_length(description) <= 500),
  -- the event types it is sent (at least one)
  event_types                 text[] NOT NULL CHECK (cardinality(event_types) > 0),
  -- sensor events limited to these units, as a token can be; NULL: every unit of the company
  cooling_unit_ids            integer[] CHECK (cooling_unit_ids IS NULL OR cardinality(cooling_unit_ids) > 0),
  -- disabled by an employee ('employee') or after deliveries failed for a day ('failing')
  disabled_reason             text CHECK (disabled_reason IN ('employee', 'failing')),
  disabled_at                 timestamptz,
  -- the signing secret (whsec_ + base64), shown once; the one it replaced signs too until its
  -- grace period ends
  secret                      text NOT NULL,
  previous_secret             text,
  previous_secret_expires_at  timestamptz,
  created_at                  timestamptz NOT NULL,
  created_by                  integer NOT NULL REFERENCES users (id),
  updated_at                  timestamptz NOT NULL,
  CHECK ((disabled_reason IS NULL) = (disabled_at IS NULL)),
  CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL))
);
CREATE INDEX webhook_endpoints_company_idx ON webhook_endpoints (company_id, created_at DESC, id DESC);

-- The outbox: one row per event of a company that has endpoints, written by the change's own
-- transaction (the triggers below for token events; src/webhooks/ for reminders, tests and
-- notices), so a change that rolls back leaves none and a committed one is never lost.
CREATE TABLE webhook_events (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  company_id       integer NOT NULL REFERENCES companies (id),
  -- the Standard Webhooks webhook-id: the same for every attempt and every endpoint
  message_id       text NOT NULL UNIQUE DEFAULT 'msg_' || replace(gen_random_uuid()::text, '-', ''),
  type             text NOT NULL CHECK (type ~ '^[a-z_]+\.[a-z_]+$'),
  occurred_at      timestamptz NOT NULL,
  data             jsonb NOT NULL CHECK (jsonb_typeof(data) = 'object'),
  -- events of one key reach an endpoint in the order they were written (a token's: its id)
  ordering_key     text NOT NULL,
  -- the one endpoint a test or a notice is for; NULL: every endpoint that wants the type
  endpoint_id      uuid REFERENCES webhook_endpoints (id) ON DELETE CASCADE
);
CREATE INDEX webhook_events_company_idx ON webhook_events (company_id, occurred_at);
-- events older than they are kept are removed by time
CREATE INDEX webhook_events_occurred_idx ON webhook_events (occurred_at);

-- An event's delivery to an endpoint: pending until an attempt succeeds ('succeeded') or the
-- retries run out ('failed'). A process sending it holds a lease (leased_until): one that dies
-- mid-attempt leaves the lease to run out, and another process sends it again (at least once).
CREATE TABLE webhook_deliveries (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id         bigint NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
  ordering_key     text NOT NULL,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts         integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at  timestamptz NOT NULL,
  leased_until     timestamptz,
  created_at       timestamptz NOT NULL,
  completed_at     timestamptz,
  UNIQUE (endpoint_id, event_id)
);
-- what is due: pending deliveries by time
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';
-- an endpoint's log, newest first, and the order of its keys
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, id DESC);
CREATE INDEX webhook_deliveries_pending_key_idx ON webhook_deliveries (endpoint_id, ordering_key, id) WHERE status = 'pending';

-- Every attempt, for the delivery log: when, how long, what the endpoint answered (or why nothing).
CREATE TABLE webhook_attempts (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id      bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt          integer NOT NULL CHECK (attempt > 0),
  started_at       timestamptz NOT NULL,
  duration_ms      integer NOT NULL CHECK (duration_ms >= 0),
  status_code      integer,
  -- why it failed, in a few words (timeout, refused address, connection reset): never a body
  error            text CHECK (char_length(error) <= 300),
  next_attempt_at  timestamptz
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, attempt);

-- Expiry reminders sent: one row per token and threshold, so every process can look for due
-- reminders and each is written once (the insert that wins writes the event).
CREATE TABLE webhook_token_reminders (
  api_token_id     uuid NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
  -- days before expires_at; 0: the token expired
  days_before      integer NOT NULL CHECK (days_before IN (0, 1, 7, 30)),
  sent_at          timestamptz NOT NULL,
  PRIMARY KEY (api_token_id, days_before)
);

-- An event fans out to the company's enabled endpoints that want its type (or to its one
-- endpoint), in the event's transaction.
CREATE FUNCTION webhook_event_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (endpoint_id, event_id, ordering_key, next_attempt_at, created_at)
  SELECT e.id, NEW.id, NEW.ordering_key, NEW.occurred_at, NEW.occurred_at
  FROM webhook_endpoints e
  WHERE e.company_id = NEW.company_id
    AND (NEW.endpoint_id = e.id OR (NEW.endpoint_id IS NULL AND e.disabled_at IS NULL AND NEW.type = ANY (e.event_types)));
  RETURN NULL;
END $$;
CREATE TRIGGER webhook_events_fan_out AFTER INSERT ON webhook_events
  FOR EACH ROW EXECUTE FUNCTION webhook_event_fan_out();

-- A token's webhook payload: what an employee sees of it, never its secret or hash.
CREATE FUNCTION webhook_token_data(token_id uuid) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'id', t.id, 'name', t.name, 'scopes', to_jsonb(t.scopes),
    'cooling_unit_ids', to_jsonb(ARRAY(SELECT u.cooling_unit_id FROM api_token_cooling_units u WHERE u.api_token_id = t.id ORDER BY 1)),
    'expires_at', t.expires_at, 'revoked_at', t.revoked_at, 'created_at', t.created_at, 'created_by', t.created_by)
  FROM api_tokens t WHERE t.id = token_id
$$;

-- Token events from the audit trail, which every token change already writes in its transaction:
-- created, rotated, revoked, and revoked after a leak report (leaked). Written only for a company
-- with an endpoint that wants the type (a disabled one too: its replay finds the events it missed).
CREATE FUNCTION webhook_token_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  event_type text := CASE NEW.action
    WHEN 'token.created' THEN 'api_token.created'
    WHEN 'token.rotated' THEN 'api_token.rotated'
    WHEN 'token.revoked' THEN 'api_token.revoked'
    WHEN 'token.revoked_leaked' THEN 'api_token.leaked'
  END;
BEGIN
  IF event_type IS NULL OR NOT EXISTS (
    SELECT 1 FROM webhook_endpoints e WHERE e.company_id = NEW.company_id AND event_type = ANY (e.event_types)
  ) THEN
    RETURN NULL;
  END IF;
  INSERT INTO webhook_events (company_id, type, occurred_at, data, ordering_key)
  VALUES (
    NEW.company_id, event_type, NEW.occurred_at,
    jsonb_build_object('api_token', webhook_token_data(NEW.token_id), 'actor', jsonb_build_object('type', NEW.actor_type, 'id', NEW.actor_id))
      || CASE WHEN NEW.related_token_id IS NULL THEN '{}'::jsonb
              ELSE jsonb_build_object('replaced_by', webhook_token_data(NEW.related_token_id)) END
      || CASE WHEN NEW.details ? 'grace_period_seconds' THEN jsonb_build_object('grace_period_seconds', NEW.details -> 'grace_period_seconds') ELSE '{}'::jsonb END,
    NEW.token_id::text);
  RETURN NULL;
END $$;
CREATE TRIGGER token_audit_events_webhooks AFTER INSERT ON token_audit_events
  FOR EACH ROW EXECUTE FUNCTION webhook_token_event();

-- Changes to endpoints are in the company's audit trail beside the token events: the action names
-- the subject (webhook_endpoint.*), and token_id holds the endpoint's id.
ALTER TABLE token_audit_events DROP CONSTRAINT token_audit_events_action_known;
ALTER TABLE token_audit_events ADD CONSTRAINT token_audit_events_action_known CHECK (action IN (
  'token.created', 'token.rotated', 'token.revoked', 'token.leak_reported', 'token.revoked_leaked',
  'webhook_endpoint.created', 'webhook_endpoint.updated', 'webhook_endpoint.deleted', 'webhook_endpoint.secret_rotated'));

-- Down Migration
-- the trail keeps every event: a database with endpoint events cannot go back below this migration
ALTER TABLE token_audit_events DROP CONSTRAINT token_audit_events_action_known;
ALTER TABLE token_audit_events ADD CONSTRAINT token_audit_events_action_known CHECK (action IN (
  'token.created', 'token.rotated', 'token.revoked', 'token.leak_reported', 'token.revoked_leaked'));
DROP TRIGGER token_audit_events_webhooks ON token_audit_events;
DROP FUNCTION webhook_token_event();
DROP FUNCTION webhook_token_data(uuid);
DROP TABLE webhook_token_reminders;
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP FUNCTION webhook_event_fan_out();
DROP TABLE webhook_endpoints;
