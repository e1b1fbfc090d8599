-- Queries behind the API-token management endpoints. Every one is scoped by company_id, so a
-- token of another company is simply not found. `$now` comes from the app's clock (testable).

-- name: liveUnitsOfCompany
SELECT id FROM cooling_units WHERE company_id = $1 AND id = ANY($2::int[]) AND NOT deleted;

-- name: insertToken
INSERT INTO api_tokens (company_id, name, scopes, token_hash, expires_at, created_at, created_by)
VALUES ($1, $2, $3, $4, $5, $6, $7)
RETURNING id;

-- name: insertTokenUnits
INSERT INTO api_token_cooling_units (api_token_id, cooling_unit_id)
SELECT $1, unnest($2::int[]);

-- name: tokenById
SELECT t.id, t.name, t.company_id, t.scopes, t.expires_at, t.last_used_at, t.revoked,
       t.revoked_at, t.created_at, t.created_by,
       ARRAY(SELECT u.cooling_unit_id FROM api_token_cooling_units u
             WHERE u.api_token_id = t.id ORDER BY 1) AS cooling_unit_ids
FROM api_tokens t
WHERE t.company_id = $1 AND t.id = $2;

-- name: listTokens
-- state: NULL (all), 'active', 'expired' or 'revoked'; newest first, id breaks ties stably
SELECT t.id, t.name, t.company_id, t.scopes, t.expires_at, t.last_used_at, t.revoked,
       t.revoked_at, t.created_at, t.created_by,
       ARRAY(SELECT u.cooling_unit_id FROM api_token_cooling_units u
             WHERE u.api_token_id = t.id ORDER BY 1) AS cooling_unit_ids
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

-- name: revokeToken
-- idempotent: a revoked token keeps its first revoked_at
UPDATE api_tokens SET revoked = true, revoked_at = coalesce(revoked_at, $3)
WHERE company_id = $1 AND id = $2;

-- name: tokenForAuth
-- the data surface's lookup by hash; the result is cached in process (src/tokens/authenticator.ts)
SELECT t.id, t.company_id, t.scopes, t.expires_at, t.revoked,
       ARRAY(SELECT u.cooling_unit_id FROM api_token_cooling_units u
             WHERE u.api_token_id = t.id ORDER BY 1) AS cooling_unit_ids
FROM api_tokens t
WHERE t.token_hash = $1;

-- name: recordLastUsed
-- write-behind of last_used_at: one statement for every token used since the last flush
UPDATE api_tokens t SET last_used_at = greatest(t.last_used_at, v.used_at)
FROM unnest($1::uuid[], $2::timestamptz[]) AS v (id, used_at)
WHERE t.id = v.id;
