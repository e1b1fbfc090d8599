-- Up Migration
-- The token audit trail (docs/employees.md, "Who did what: the audit trail"): one row per token
-- event, written in the same transaction as the change it records, never changed or removed
-- afterwards. Each company's events form a hash chain: an event's hash covers its content and the
-- hash of the company's previous event, so an event altered, removed or slipped in by SQL breaks
-- the chain where it happened (`npm run audit:verify -- --company <id>` finds it).
CREATE TABLE token_audit_events (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  company_id        integer NOT NULL REFERENCES companies (id),
  -- 1, 2, 3... within the company, in the order the events committed; set by the chain trigger
  sequence          bigint NOT NULL CHECK (sequence > 0),
  occurred_at       timestamptz NOT NULL,
  -- a list that grows with the features that record events: a new action is a migration that
  -- replaces this constraint (the reserved ones are for the leak reports to come)
  action            text NOT NULL CONSTRAINT token_audit_events_action_known CHECK (action IN (
                      'token.created', 'token.rotated', 'token.revoked', 'token.leak_reported', 'token.revoked_leaked')),
  -- no foreign keys to api_tokens: the trail outlives anything it names
  token_id          uuid NOT NULL,
  -- token.rotated: the replacement (token_id is the token rotated)
  related_token_id  uuid CHECK (related_token_id <> token_id),
  -- who: an employee (actor_id: the user id), whoever reported a leak (their name for
  -- themselves), or the service itself (the component)
  actor_type        text NOT NULL CONSTRAINT token_audit_events_actor_type_known CHECK (actor_type IN ('employee', 'leak_reporter', 'system')),
  actor_id          text NOT NULL CHECK (char_length(actor_id) BETWEEN 1 AND 200),
  -- from where: the client IP as TRUST_PROXY resolves it, the User-Agent (cut to 512 characters)
  -- and the request id the answer carried
  client_ip         inet,
  user_agent        text CHECK (char_length(user_agent) <= 512),
  request_id        text CHECK (char_length(request_id) <= 128),
  -- what the action set (a new token's name, scopes, units and expiry; a rotation's grace period):
  -- never a raw token or its hash
  details           jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(details) = 'object'),
  -- SHA-256 (token_audit_event_hash below); prev_hash: the company's previous event's, none for its first
  prev_hash         bytea CHECK (octet_length(prev_hash) = 32),
  hash              bytea NOT NULL CHECK (octet_length(hash) = 32),
  UNIQUE (company_id, sequence),
  CHECK ((sequence = 1) = (prev_hash IS NULL)),
  CHECK (actor_type <> 'employee' OR actor_id ~ '^[1-9][0-9]{0,9}$')
);
-- a token's history (GET /api/v1/audit-events?token_id=): events naming it either way
CREATE INDEX token_audit_events_token_idx ON token_audit_events (token_id, sequence);
CREATE INDEX token_audit_events_related_token_idx ON token_audit_events (related_token_id, sequence) WHERE related_token_id IS NOT NULL;

-- The hash of an event: SHA-256 over the UTF-8 text of a JSON array of every stored field but the
-- hash itself, in a fixed order, the previous event's hash last (hex, or null). jsonb's text is
-- one spelling per value (keys of `details` sorted, no optional whitespace choices); the time is
-- written in UTC to the microsecond, whatever the session's TimeZone. The first element names the
-- layout, so a later layout can be told apart.
CREATE FUNCTION token_audit_event_hash(event token_audit_events) RETURNS bytea
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT sha256(convert_to(jsonb_build_array(
    'coldtrack.token_audit_event.v1',
    event.id, event.company_id, event.sequence,
    to_char(event.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    event.action, event.token_id, event.related_token_id,
    event.actor_type, event.actor_id,
    host(event.client_ip), event.user_agent, event.request_id,
    event.details,
    encode(event.prev_hash, 'hex')
  )::text, 'UTF8'))
$$;

-- Chains every new event, whoever inserts it: what the inserter says of sequence, prev_hash and
-- hash is overwritten. Two transactions of one company take turns on a lock held until each ends,
-- so the second reads the first's event as its previous one and the chain never forks (the unique
-- (company_id, sequence) would refuse a fork even so); other companies do not wait.
CREATE FUNCTION token_audit_events_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  previous record;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('coldtrack.token_audit_events'), NEW.company_id);
  -- a statement of its own after the lock: its snapshot sees what the previous holder committed
  SELECT sequence, hash INTO previous FROM token_audit_events
  WHERE company_id = NEW.company_id ORDER BY sequence DESC LIMIT 1;
  NEW.sequence := coalesce(previous.sequence, 0) + 1;
  NEW.prev_hash := previous.hash;
  NEW.hash := token_audit_event_hash(NEW);
  RETURN NEW;
END
$$;
CREATE TRIGGER token_audit_events_chain BEFORE INSERT ON token_audit_events
  FOR EACH ROW EXECUTE FUNCTION token_audit_events_chain();

-- Append-only, enforced by the database: UPDATE, DELETE and TRUNCATE fail, whoever sends them and
-- however many rows they name (a statement trigger fires even for none). ENABLE ALWAYS: it fires
-- under session_replication_role = replica too, which silences ordinary triggers. Only the table's
-- owner or a superuser can switch it off (ALTER TABLE ... DISABLE TRIGGER), and nothing in the
-- service does.
CREATE FUNCTION token_audit_events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'token_audit_events is append-only: % is refused', TG_OP
    USING HINT = 'Audit events are never changed or removed; see docs/operations.md, "The token audit trail".';
END
$$;
CREATE TRIGGER token_audit_events_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON token_audit_events
  FOR EACH STATEMENT EXECUTE FUNCTION token_audit_events_refuse_change();
ALTER TABLE token_audit_events ENABLE ALWAYS TRIGGER token_audit_events_append_only;

-- Nobody holds the privileges either, the owner (the role migrations run as) included: a role that
-- is not a superuser is refused before the trigger is reached. (PUBLIC never had them; said anyway.)
REVOKE UPDATE, DELETE, TRUNCATE ON token_audit_events FROM PUBLIC;
REVOKE UPDATE, DELETE, TRUNCATE ON token_audit_events FROM CURRENT_USER;

-- Down Migration
-- the hash function first: it takes the table's row type
DROP FUNCTION token_audit_event_hash(token_audit_events);
DROP TABLE token_audit_events;
DROP FUNCTION token_audit_events_refuse_change();
DROP FUNCTION token_audit_events_chain();
