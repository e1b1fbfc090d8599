-- Usage per API token (src/tokens/usage.ts writes it, src/routes/api-tokens/usage.ts reads it).

-- name: recordTokenUsage
-- One flush of one process, in one statement: its id is claimed first, and the counts are added
-- only when the claim is new, so the same flush sent again after a lost answer adds nothing. The
-- last client is kept when it is newer than the stored one (a late flush of another worker does
-- not overwrite a newer client); that part needs no claim, being the same whenever repeated.
-- The join drops a token deleted meanwhile, which would otherwise fail the batch for good.
WITH claimed AS (
  INSERT INTO api_token_usage_flushes (flush_id, flushed_at) VALUES ($1, $2)
  ON CONFLICT DO NOTHING
  RETURNING flush_id
), counted AS (
  INSERT INTO api_token_usage (api_token_id, day, endpoint, class, requests)
  SELECT v.api_token_id, v.day, v.endpoint, v.class, v.requests
  FROM unnest($3::uuid[], $4::date[], $5::text[], $6::text[], $7::bigint[]) AS v (api_token_id, day, endpoint, class, requests)
  JOIN api_tokens t ON t.id = v.api_token_id
  WHERE EXISTS (SELECT 1 FROM claimed)
  ON CONFLICT (api_token_id, day, endpoint, class) DO UPDATE SET requests = api_token_usage.requests + EXCLUDED.requests
)
INSERT INTO api_token_last_client AS c (api_token_id, seen_at, ip, user_agent)
SELECT v.api_token_id, v.seen_at, v.ip, v.user_agent
FROM unnest($8::uuid[], $9::timestamptz[], $10::inet[], $11::text[]) AS v (api_token_id, seen_at, ip, user_agent)
JOIN api_tokens t ON t.id = v.api_token_id
ON CONFLICT (api_token_id) DO UPDATE SET seen_at = EXCLUDED.seen_at, ip = EXCLUDED.ip, user_agent = EXCLUDED.user_agent
WHERE c.seen_at <= EXCLUDED.seen_at;

-- name: pruneTokenUsage
-- the retention: usage rows before day $1, flush ids older than $2 (both kept far past any retry)
WITH usage AS (DELETE FROM api_token_usage WHERE day < $1)
DELETE FROM api_token_usage_flushes WHERE flushed_at < $2;

-- name: tokenUsageByDay
-- the caller checked the token belongs to the employee's company; days $2..$3 inclusive
SELECT to_char(day, 'YYYY-MM-DD') AS day, endpoint, class, requests::float8 AS requests
FROM api_token_usage
WHERE api_token_id = $1 AND day BETWEEN $2 AND $3
ORDER BY day, endpoint, class;

-- name: tokenLastClient
SELECT host(ip) AS ip, user_agent FROM api_token_last_client WHERE api_token_id = $1;
