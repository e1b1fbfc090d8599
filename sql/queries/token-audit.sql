-- The token audit trail (sql/migrations/010_token-audit-events.sql): events are only ever inserted
-- (the table refuses UPDATE, DELETE and TRUNCATE) and read. sequence, prev_hash and hash are set
-- by the table's chain trigger, whatever an insert says of them.

-- name: insertEvent
-- the last statement of the action's transaction: the chain's per-company lock it takes is held
-- only until the commit
INSERT INTO token_audit_events (company_id, occurred_at, action, token_id, related_token_id, actor_type, actor_id,
                                client_ip, user_agent, request_id, details)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11);

-- name: listEvents
-- newest first: the reverse of the company's chain. $2: a token named either way (the rotated
-- token or its replacement); NULL filters select everything. An employee actor's name is read now.
SELECT e.id, e.sequence, e.occurred_at, e.action, e.token_id, e.related_token_id, e.actor_type, e.actor_id,
       nullif(btrim(concat_ws(' ', u.first_name, u.last_name)), '') AS actor_name,
       host(e.client_ip) AS client_ip, e.user_agent, e.request_id, e.details,
       encode(e.prev_hash, 'hex') AS prev_hash, encode(e.hash, 'hex') AS hash
FROM token_audit_events e
LEFT JOIN users u ON u.id = CASE WHEN e.actor_type = 'employee' THEN e.actor_id::int END
WHERE e.company_id = $1
  AND ($2::uuid IS NULL OR e.token_id = $2 OR e.related_token_id = $2)
  AND ($3::text IS NULL OR e.action = $3)
  AND ($4::timestamptz IS NULL OR e.occurred_at >= $4)
  AND ($5::timestamptz IS NULL OR e.occurred_at < $5)
ORDER BY e.sequence DESC
LIMIT $6 OFFSET $7;

-- name: countEvents
SELECT count(*)::int AS total_count
FROM token_audit_events e
WHERE e.company_id = $1
  AND ($2::uuid IS NULL OR e.token_id = $2 OR e.related_token_id = $2)
  AND ($3::text IS NULL OR e.action = $3)
  AND ($4::timestamptz IS NULL OR e.occurred_at >= $4)
  AND ($5::timestamptz IS NULL OR e.occurred_at < $5);

-- name: chainSegment
-- audit:verify's walk: the company's events after sequence $2, in chain order, each with the hash
-- its stored content gives now
SELECT e.id, e.sequence, e.prev_hash, e.hash, token_audit_event_hash(e) AS recomputed
FROM token_audit_events e
WHERE e.company_id = $1 AND e.sequence > $2
ORDER BY e.sequence
LIMIT $3;
