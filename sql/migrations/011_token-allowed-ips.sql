-- Up Migration
-- IP allow-lists on API tokens (docs/employees.md, "Restricting a token to your addresses"): the
-- networks a token may be used from, set at creation and carried to its replacement by a rotation;
-- empty: any address. `cidr` (not text) so that the database itself refuses anything but a network
-- with no host bits set, and writes each one in a single canonical text; the service normalises
-- and checks every entry first (src/tokens/allowed-ips.ts) and names the one at fault.
ALTER TABLE api_tokens
  ADD COLUMN allowed_ips cidr[] NOT NULL DEFAULT '{}',
  ADD CONSTRAINT api_tokens_allowed_ips_at_most_50 CHECK (cardinality(allowed_ips) <= 50),
  ADD CONSTRAINT api_tokens_allowed_ips_no_nulls CHECK (array_position(allowed_ips, NULL) IS NULL);

-- Down Migration
ALTER TABLE api_tokens
  DROP CONSTRAINT api_tokens_allowed_ips_no_nulls,
  DROP CONSTRAINT api_tokens_allowed_ips_at_most_50,
  DROP COLUMN allowed_ips;
