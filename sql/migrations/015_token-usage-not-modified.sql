-- Up Migration
-- A conditional request answered 304 (src/data-surface/conditional-requests.ts) is a class of its
-- own in a token's usage: not a 2xx (no body was sent) and not counted by the rate limit.
ALTER TABLE api_token_usage DROP CONSTRAINT api_token_usage_class_known;
ALTER TABLE api_token_usage ADD CONSTRAINT api_token_usage_class_known CHECK (class IN ('2xx', '304', '4xx', '429', '5xx'));

-- Down Migration
DELETE FROM api_token_usage WHERE class = '304';
ALTER TABLE api_token_usage DROP CONSTRAINT api_token_usage_class_known;
ALTER TABLE api_token_usage ADD CONSTRAINT api_token_usage_class_known CHECK (class IN ('2xx', '4xx', '429', '5xx'));
