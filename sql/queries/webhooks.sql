-- Webhook endpoints, their events and deliveries (src/webhooks/). Every endpoint query is scoped by
-- company_id: another company's endpoint is not found. `$now` comes from the app's clock.

-- name: insertEndpoint
INSERT INTO webhook_endpoints (company_id, url, description, event_types, cooling_unit_ids, secret, created_at, created_by, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $7)
RETURNING id;

-- name: endpointById
SELECT id, company_id, url, description, event_types, cooling_unit_ids, disabled_reason, disabled_at,
       previous_secret_expires_at, created_at, created_by, updated_at
FROM webhook_endpoints
WHERE company_id = $1 AND id = $2;

-- name: listEndpoints
SELECT id, company_id, url, description, event_types, cooling_unit_ids, disabled_reason, disabled_at,
       previous_secret_expires_at, created_at, created_by, updated_at,
       count(*) OVER ()::int AS total_count
FROM webhook_endpoints
WHERE company_id = $1
ORDER BY created_at DESC, id DESC
LIMIT $2 OFFSET $3;

-- name: countEndpoints
SELECT count(*)::int AS count FROM webhook_endpoints WHERE company_id = $1;

-- name: updateEndpoint
-- NULL leaves a field as it is; $7: true enables, false disables (by an employee), NULL leaves it.
-- $8 (true): cooling_unit_ids set to NULL (every unit).
UPDATE webhook_endpoints
SET url = coalesce($3, url),
    description = coalesce($4, description),
    event_types = coalesce($5, event_types),
    cooling_unit_ids = CASE WHEN $8::boolean THEN NULL ELSE coalesce($6, cooling_unit_ids) END,
    disabled_reason = CASE WHEN $7::boolean IS NULL THEN disabled_reason WHEN $7 THEN NULL
                           WHEN disabled_reason IS NULL THEN 'employee' ELSE disabled_reason END,
    disabled_at = CASE WHEN $7::boolean IS NULL THEN disabled_at WHEN $7 THEN NULL ELSE coalesce(disabled_at, $9) END,
    updated_at = $9
WHERE company_id = $1 AND id = $2
RETURNING id;

-- name: deleteEndpoint
DELETE FROM webhook_endpoints WHERE company_id = $1 AND id = $2 RETURNING id;

-- name: rotateSecret
-- the current secret signs on beside the new one until $4; a rotation during another's grace
-- period drops the oldest
UPDATE webhook_endpoints
SET previous_secret = secret, previous_secret_expires_at = $4, secret = $3, updated_at = $5
WHERE company_id = $1 AND id = $2
RETURNING id;

-- name: insertEvent
-- An event for the company's endpoints that want the type ($6 NULL), or for one endpoint ($6).
INSERT INTO webhook_events (company_id, type, occurred_at, data, ordering_key, endpoint_id)
VALUES ($1, $2, $3, $4, $5, $6)
RETURNING id, message_id;

-- name: claimDue
-- Up to $2 deliveries due at $1, leased until $3: pending, not leased by a live process, the
-- endpoint enabled and with fewer than $4 deliveries in flight counting those this claim takes,
-- and no earlier pending delivery of the same ordering key to the same endpoint (events of a key
-- arrive in order). SKIP LOCKED: processes claiming at once take different rows, never the same
-- one. The candidates are locked first, then ranked per endpoint (a window cannot sit beside FOR
-- UPDATE), so one claim never takes an endpoint past its bound; the candidates it leaves are
-- unlocked when the statement ends. Each attempt it starts is in the log from now ('sending',
-- attempt_id: recordAttempt completes it), and an attempt still 'sending' whose delivery's lease
-- has run out (its process killed, or unable to record the answer) is marked 'interrupted' first:
-- the log shows every attempt made, in the claim's one statement, and the metrics count them.
WITH candidates AS (
  SELECT d.id, d.endpoint_id, d.next_attempt_at,
         (SELECT count(*) FROM webhook_deliveries busy
          WHERE busy.endpoint_id = d.endpoint_id AND busy.status = 'pending' AND busy.leased_until >= $1) AS busy
  FROM webhook_deliveries d
  -- the due index's rows first (status and time), then the whole rule
  WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND webhook_delivery_claimable(d, $1, $4)
  ORDER BY d.next_attempt_at, d.id
  LIMIT $2
  FOR UPDATE OF d SKIP LOCKED
),
due AS (
  SELECT id FROM (
    SELECT id, busy + row_number() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at, id) AS in_flight
    FROM candidates
  ) ranked
  WHERE in_flight <= $4
),
leased AS (
  UPDATE webhook_deliveries d
  SET leased_until = $3, attempts = d.attempts + 1
  FROM due
  WHERE d.id = due.id
  RETURNING d.id, d.attempts, d.endpoint_id, d.event_id
),
-- (the statement's snapshot: the leases as they were before this claim took any)
abandoned AS (
  UPDATE webhook_attempts a
  SET outcome = 'interrupted', error = 'interrupted: the sending process stopped before the answer was recorded'
  FROM webhook_deliveries d
  WHERE a.outcome = 'sending' AND d.id = a.delivery_id AND (d.leased_until IS NULL OR d.leased_until < $1)
  RETURNING a.id
),
started AS (
  INSERT INTO webhook_attempts (delivery_id, attempt, started_at, outcome)
  SELECT id, attempts, $1, 'sending' FROM leased
  RETURNING id, delivery_id
)
-- a row a claimed delivery, each with how many attempts the claim marked interrupted; one row of
-- nulls and that count when it claimed none (the metrics count them either way)
SELECT c.interrupted, l.id, l.attempts, s.id AS attempt_id, l.endpoint_id, e.company_id, e.url, e.secret,
       e.previous_secret, e.previous_secret_expires_at, ev.message_id, ev.type, ev.occurred_at, ev.data
FROM (SELECT count(*)::int AS interrupted FROM abandoned) c
LEFT JOIN (leased l
  JOIN started s ON s.delivery_id = l.id
  JOIN webhook_events ev ON ev.id = l.event_id
  JOIN webhook_endpoints e ON e.id = l.endpoint_id) ON true;

-- name: recordAttempt
-- An attempt's outcome, in its row of the log ($9, written by the claim), and the delivery
-- succeeded, failed for good, or due again at $8. Only the lease holder's attempt ($2 = attempts)
-- moves the delivery; a late one is only logged (what happened replaces 'interrupted' if a claim
-- marked it so meanwhile). The delivery's row is locked before the attempt's (the statement runs
-- before its unreferenced WITH), as the claim locks them: neither waits on the other in a circle.
WITH logged AS (
  UPDATE webhook_attempts
  SET outcome = CASE WHEN $7 = 'succeeded' THEN 'succeeded' ELSE 'failed' END,
      duration_ms = $4, status_code = $5, error = $6, next_attempt_at = $8
  WHERE id = $9
)
UPDATE webhook_deliveries
SET status = $7, leased_until = NULL, next_attempt_at = coalesce($8, next_attempt_at),
    completed_at = CASE WHEN $7 = 'pending' THEN NULL ELSE $3::timestamptz + $4 * interval '1 millisecond' END
WHERE id = $1 AND attempts = $2 AND status = 'pending'
RETURNING id;

-- name: disableFailing
-- An endpoint whose delivery ran out of retries: disabled, if an employee has not already
UPDATE webhook_endpoints SET disabled_reason = 'failing', disabled_at = $2, updated_at = $2
WHERE id = $1 AND disabled_at IS NULL
RETURNING id, company_id, url;

-- name: listDeliveries
-- An endpoint's deliveries, newest first, each with its event, its last attempt that has ended
-- (with an answer, a failure, or interrupted: one under way has no outcome to show yet; the last
-- started, as a replay numbers its attempts from 1 again) and how many of its log's were interrupted.
SELECT d.id, d.status, d.attempts, d.next_attempt_at, d.created_at, d.completed_at,
       ev.message_id, ev.type, ev.occurred_at,
       a.started_at AS last_attempt_at, a.outcome AS last_outcome, a.status_code AS last_status_code, a.error AS last_error,
       a.duration_ms AS last_duration_ms,
       (SELECT count(*)::int FROM webhook_attempts i WHERE i.delivery_id = d.id AND i.outcome = 'interrupted') AS interrupted_attempts,
       count(*) OVER ()::int AS total_count
FROM webhook_deliveries d
JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.company_id = $1
JOIN webhook_events ev ON ev.id = d.event_id
LEFT JOIN LATERAL (
  SELECT started_at, outcome, status_code, error, duration_ms FROM webhook_attempts
  WHERE delivery_id = d.id AND outcome <> 'sending' ORDER BY id DESC LIMIT 1
) a ON true
WHERE d.endpoint_id = $2 AND ($3::text IS NULL OR d.status = $3)
ORDER BY d.id DESC
LIMIT $4 OFFSET $5;

-- name: replayDelivery
-- One delivery sent again from its first attempt (whatever its status).
UPDATE webhook_deliveries d
SET status = 'pending', attempts = 0, next_attempt_at = $4, leased_until = NULL, completed_at = NULL
FROM webhook_endpoints e
WHERE d.id = $3 AND d.endpoint_id = $2 AND e.id = d.endpoint_id AND e.company_id = $1
RETURNING d.id;

-- name: replaySince
-- Every event of the company since $3 that the endpoint wants (or was sent), sent again to it:
-- deliveries made where there were none, and those that exist set pending from their first attempt.
INSERT INTO webhook_deliveries (endpoint_id, event_id, ordering_key, next_attempt_at, created_at)
SELECT e.id, ev.id, ev.ordering_key, $4, $4
FROM webhook_endpoints e
JOIN webhook_events ev ON ev.company_id = e.company_id AND ev.occurred_at >= $3
WHERE e.company_id = $1 AND e.id = $2
  AND ((ev.endpoint_id IS NULL AND ev.type = ANY (e.event_types)) OR ev.endpoint_id = e.id)
ON CONFLICT (endpoint_id, event_id) DO UPDATE
SET status = 'pending', attempts = 0, next_attempt_at = excluded.next_attempt_at, leased_until = NULL, completed_at = NULL
RETURNING id;

-- name: queueStats
-- For metrics at $1: the pending deliveries, and how long the oldest one a process could claim
-- has waited, in seconds (0: none). Claimable as claimDue takes them ($2: the in-flight limit per
-- endpoint, webhook_delivery_claimable): one held by its endpoint (disabled, at its limit, or an
-- earlier delivery of its ordering key pending: retrying) is waiting on the partner, not on the
-- sender, and is not counted. The first claimable one in the due index's order.
SELECT (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'pending') AS pending,
       coalesce((
         SELECT extract(epoch FROM $1::timestamptz - d.next_attempt_at)
         FROM webhook_deliveries d
         WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND webhook_delivery_claimable(d, $1, $2)
         ORDER BY d.next_attempt_at, d.id
         LIMIT 1), 0)::float8 AS oldest_due_seconds;

-- name: writeDueReminders
-- Expiry reminders due at $1, each written once whatever runs it at once (the reminders table's
-- key: the insert that wins writes the event). For a token with several thresholds passed (a
-- token made 5 days before its expiry, or a first endpoint registered late) only the nearest is
-- sent; the others are marked, moot. Expired: within the last 7 days (no notices about tokens
-- long gone when the first endpoint is registered). Only for companies with an endpoint that
-- wants the type (a disabled one too, for its replay): a company that registers one later gets
-- the reminder then due.
WITH thresholds (days, type) AS (VALUES (30, 'api_token.expiring'), (7, 'api_token.expiring'), (1, 'api_token.expiring'), (0, 'api_token.expired')),
candidates AS (
  SELECT t.id, t.company_id, th.days, th.type, min(th.days) OVER (PARTITION BY t.id) AS nearest
  FROM api_tokens t
  JOIN thresholds th ON t.expires_at - th.days * interval '1 day' <= $1
  WHERE NOT t.revoked AND t.expires_at IS NOT NULL AND t.expires_at > $1 - interval '7 days'
    -- a token rotated away ends with its grace period, as api_token.rotated said: no reminders
    AND NOT EXISTS (SELECT 1 FROM api_tokens replacement WHERE replacement.rotated_from = t.id)
    AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.company_id = t.company_id AND th.type = ANY (e.event_types))
),
marked AS (
  INSERT INTO webhook_token_reminders (api_token_id, days_before, sent_at)
  SELECT id, days, $1 FROM candidates
  ON CONFLICT DO NOTHING
  RETURNING api_token_id, days_before
)
INSERT INTO webhook_events (company_id, type, occurred_at, data, ordering_key)
SELECT c.company_id, c.type, $1,
       jsonb_build_object('api_token', webhook_token_data(c.id)) ||
         CASE WHEN c.days > 0 THEN jsonb_build_object('days_before_expiry', c.days) ELSE '{}'::jsonb END,
       c.id::text
FROM marked m
JOIN candidates c ON c.id = m.api_token_id AND c.days = m.days_before
WHERE c.days = c.nearest
RETURNING id;

-- name: pruneEvents
-- Events older than $1, with their deliveries and attempts, unless a delivery is still pending.
DELETE FROM webhook_events ev
WHERE ev.occurred_at < $1
  AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ev.id AND d.status = 'pending');

-- name: claimSensorNotices
-- Endpoints that want sensor_data.changed and were last told a minute or more before $1 (or never),
-- locked for this transaction (SKIP LOCKED: another process takes others), at most $2.
SELECT id, company_id, cooling_unit_ids, sensor_position
FROM webhook_endpoints
WHERE 'sensor_data.changed' = ANY (event_types) AND disabled_at IS NULL
  AND (sensor_notified_at IS NULL OR sensor_notified_at <= $1::timestamptz - interval '1 minute')
ORDER BY sensor_notified_at NULLS FIRST, id
LIMIT $2
FOR UPDATE SKIP LOCKED;

-- name: sensorChangesAfter
-- What landed for the company's units (only $3's when given) after feed position $2: the last
-- change's id, the units, the readings and the span of time they cover. No row when nothing did.
SELECT max(c.id)::text AS last_id,
       array_agg(DISTINCT c.cooling_unit_id ORDER BY c.cooling_unit_id) AS cooling_unit_ids,
       sum(c.readings)::int AS readings,
       min(c.first_at) AS first_at,
       max(c.last_at) AS last_at
FROM sensor_changes c
JOIN cooling_units u ON u.id = c.cooling_unit_id AND u.company_id = $1
WHERE c.id > $2 AND ($3::int[] IS NULL OR c.cooling_unit_id = ANY ($3))
HAVING count(*) > 0;

-- name: markSensorNotice
UPDATE webhook_endpoints SET sensor_position = $2, sensor_notified_at = $3 WHERE id = $1;

-- name: feedHead
-- The change feed's head (as the history pages compute it).
SELECT coalesce((SELECT max(id) FROM sensor_changes), (SELECT pruned_through FROM sensor_changes_state))::text AS head;

-- name: advanceSensorPosition
-- Nothing of the endpoint's units landed up to $2: later reads start there (the notice time unchanged).
UPDATE webhook_endpoints SET sensor_position = $2 WHERE id = $1 AND sensor_position < $2;
