-- Up Migration
-- Token rotation (POST /api/v1/api-tokens/{id}/rotate): a replacement names the token it replaces.
-- Only that direction is stored; the other (`replaced_by`) is read back through the unique index,
-- so the two links can never disagree, and a token is replaced at most once even when two
-- rotations race (the second insert fails on the index).
ALTER TABLE api_tokens
  ADD COLUMN rotated_from uuid REFERENCES api_tokens (id),
  ADD CONSTRAINT api_tokens_not_rotated_from_itself CHECK (rotated_from <> id);
CREATE UNIQUE INDEX api_tokens_rotated_from_idx ON api_tokens (rotated_from) WHERE rotated_from IS NOT NULL;

-- Down Migration
DROP INDEX api_tokens_rotated_from_idx;
ALTER TABLE api_tokens DROP CONSTRAINT api_tokens_not_rotated_from_itself, DROP COLUMN rotated_from;
