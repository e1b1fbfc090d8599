-- Queries behind the API-token management endpoints. Every one is scoped by company_id, so a
-- token of another company is simply not found. `$now` comes from the app's clock (testable).

-- name: liveUnitsOfCompany
SELECT id FROM cooling_units WHERE company_id = $1 AND id = ANY($2::int[]) AND NOT deleted;

-- name: insertToken
-- $8: the token this one replaces (a rotation), else NULL; $9: the allow-list, canonical CIDR text
INSERT INTO api_tokens (company_id, name, scopes, token_hash, expires_at, created_at, created_by, rotated_from, allowed_ips)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::cidr[])
RETURNING id, allowed_ips::text[] AS allowed_ips;

-- name: insertTokenUnits
INSERT INTO api_token_cooling_units (api_token_id, cooling_unit_id)
SELECT $1, unnest($2::int[]);

-- name: tokenById
SELECT t.id, t.name, t.company_id, t.scopes, t.expires_at, t.last_used_at, t.revoked,
       t.revoked_at, t.created_at, t.created_by, t.rotated_from,
       (SELECT r.id FROM api_tokens r WHERE r.rotated_from = t.id) AS replaced_by,
       ARRAY(SELECT u.cooling_unit_id FROM api_token_cooling_units u
             WHERE u.api_token_id = t.id ORDER BY 1) AS cooling_unit_ids,
       t.allowed_ips::text[] AS allowed_ips
FROM api_tokens t
WHERE t.company_id = $1 AND t.id = $2;

-- name: listTokens
-- state: NULL (all), 'active', 'expired' or 'revoked'; newest first, id breaks ties stably
SELECT t.id, t.name, t.company_id, t.scopes, t.expires_at, t.last_used_at, t.revoked,
       t.revoked_at, t.created_at, t.created_by, t.rotated_from,
       (SELECT r.id FROM api_tokens r WHERE r.rotated_from = t.id) AS replaced_by,
       ARRAY(SELECT u.cooling_unit_id FROM api_token_cooling_units u
             WHERE u.api_token_id = t.id ORDER BY 1) AS cooling_unit_ids,
       t.allowed_ips::text[] AS allowed_ips
FROM api_tokens t
WHERE t.company_id = $1
  AND ($2::text IS NULL OR api_token_state(t.revoked, t.expires_at, $3) = $2)
ORDER BY t.created_at DESC, t.id DESC
LIMIT $4 OFFSET $5;

-- name: countTokens
SELECT count(*)::int AS total_count
FROM api_tokens t
WHERE t.company_id = $1
  AND ($2::text IS NULL OR api_token_state(t.revoked, t.expires_at, $3) = $2);

-- name: lockTokenForRevoke
-- the row, locked until the revoke commits or rolls back (two revokes of one token take turns)
SELECT revoked FROM api_tokens WHERE company_id = $1 AND id = $2 FOR UPDATE;

-- name: revokeToken
UPDATE api_tokens SET revoked = true, revoked_at = $3
WHERE company_id = $1 AND id = $2 AND NOT revoked;

-- name: lockTokenForRotate
-- the row, locked until the rotation commits or rolls back (a revoke or a second rotation waits)
SELECT id FROM api_tokens WHERE company_id = $1 AND id = $2 FOR UPDATE;

-- name: tokenToRotate
-- read after the lock, in a statement of its own: its snapshot sees what a rotation or revoke that
-- held the lock before us committed
SELECT t.name, t.scopes, t.expires_at, t.revoked, t.allowed_ips::text[] AS allowed_ips,
       EXISTS (SELECT 1 FROM api_tokens r WHERE r.rotated_from = t.id) AS replaced
FROM api_tokens t
WHERE t.company_id = $1 AND t.id = $2;

-- name: copyTokenUnits
-- the replacement reads exactly the units the old token reads (a unit deleted since included:
-- dropping it could leave an empty list, which would mean company-wide)
INSERT INTO api_token_cooling_units (api_token_id, cooling_unit_id)
SELECT $2, cooling_unit_id FROM api_token_cooling_units WHERE api_token_id = $1;

-- name: bringExpiryForward
-- the rotated token ends at $3 unless it already ends sooner (LEAST skips a NULL: never expiring)
UPDATE api_tokens SET expires_at = LEAST(expires_at, $3)
WHERE company_id = $1 AND id = $2
RETURNING expires_at;

-- name: tokenForAuth
-- the data surface's lookup by hash; the result is cached in process (src/tokens/authenticator.ts)
SELECT t.id, t.company_id, t.scopes, t.expires_at, t.revoked,
       ARRAY(SELECT u.cooling_unit_id FROM api_token_cooling_units u
             WHERE u.api_token_id = t.id ORDER BY 1) AS cooling_unit_ids,
       t.allowed_ips::text[] AS allowed_ips
FROM api_tokens t
WHERE t.token_hash = $1;

-- name: recordLastUsed
-- write-behind of last_used_at: one statement for every token used since the last flush
UPDATE api_tokens t SET last_used_at = greatest(t.last_used_at, v.used_at)
FROM unnest($1::uuid[], $2::timestamptz[]) AS v (id, used_at)
WHERE t.id = v.id;
