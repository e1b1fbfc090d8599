-- Queries behind leak reports (POST /api/v1/token-leaks, src/tokens/leak-reports.ts). A reported
-- token is found by its hash alone, in whichever company holds it: the report names no company,
-- and the answer never says which one it was.

-- name: tokensByHash
-- $1: the SHA-256 of every well-formed token of one report, looked up at once
SELECT id, company_id, token_hash FROM api_tokens WHERE token_hash = ANY($1::bytea[]);

-- name: lockReportedToken
-- the row, locked until the report's transaction ends (a revoke or rotation of it waits); $3: now
SELECT api_token_state(revoked, expires_at, $3) AS state
FROM api_tokens WHERE company_id = $1 AND id = $2 FOR UPDATE;

-- name: leakAlreadyReported
-- the same leak (where and how it was found) already in the token's trail: a replayed report
SELECT EXISTS (
  SELECT 1 FROM token_audit_events
  WHERE token_id = $2 AND company_id = $1 AND action = 'token.leak_reported'
    AND details->>'url' IS NOT DISTINCT FROM $3 AND details->>'source' IS NOT DISTINCT FROM $4
) AS reported;
