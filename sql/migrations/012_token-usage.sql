-- Up Migration
-- Usage per API token (GET /api/v1/api-tokens/{id}/usage): requests per UTC day, route and answer
-- class, counted in memory by every worker and added here by its write-behind flush
-- (src/tokens/usage.ts), never one write per request. Rows older than the retention
-- (TOKEN_USAGE_RETENTION_DAYS in src/tokens/usage.ts) are pruned by the flushes, once a day.
CREATE TABLE api_token_usage (
  api_token_id  uuid NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
  day           date NOT NULL,
  -- the route's URL pattern (/api/v1/sensor-data/:cooling_unit_id), never the URL as sent
  endpoint      text NOT NULL CHECK (char_length(endpoint) BETWEEN 1 AND 200),
  -- 429 apart from the other 4xx: being rate limited is a different conversation with the partner
  class         text NOT NULL CONSTRAINT api_token_usage_class_known CHECK (class IN ('2xx', '4xx', '429', '5xx')),
  requests      bigint NOT NULL CHECK (requests > 0),
  PRIMARY KEY (api_token_id, day, endpoint, class)
);
-- the retention prune
CREATE INDEX api_token_usage_day_idx ON api_token_usage (day);

-- The last client a token was used from, as the last flush that saw it wrote it: the client IP as
-- TRUST_PROXY resolves it and the User-Agent (cut to 512 characters).
CREATE TABLE api_token_last_client (
  api_token_id  uuid PRIMARY KEY REFERENCES api_tokens (id) ON DELETE CASCADE,
  seen_at       timestamptz NOT NULL,
  ip            inet,
  user_agent    text CHECK (char_length(user_agent) <= 512)
);

-- Each flush's id, written in the same statement as its counts: a flush retried after an answer
-- that never arrived (the connection dropped around the commit) finds its id here and adds nothing
-- twice. Kept a week (pruned with the usage rows), far past any retry.
CREATE TABLE api_token_usage_flushes (
  flush_id    uuid PRIMARY KEY,
  flushed_at  timestamptz NOT NULL
);
CREATE INDEX api_token_usage_flushes_flushed_at_idx ON api_token_usage_flushes (flushed_at);

-- Down Migration
DROP TABLE api_token_usage_flushes, api_token_last_client, api_token_usage;
