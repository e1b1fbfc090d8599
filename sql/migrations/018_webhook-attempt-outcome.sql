-- Up Migration
-- An attempt is in the delivery log from its start, not only once its answer is recorded: the claim
-- that starts it writes its row ('sending'), and the outcome completes it. A process killed (or
-- unable to record the answer) in between leaves it 'sending' with its lease to run out; the next
-- claim marks it 'interrupted' (no answer recorded: the endpoint may have received it) before the
-- delivery is tried again, so the log shows every attempt made. A late answer, from a process that
-- outlived its lease, replaces 'interrupted' with what happened (src/webhooks/dispatcher.ts).
ALTER TABLE webhook_attempts
  ADD COLUMN outcome text,
  ALTER COLUMN duration_ms DROP NOT NULL;
-- attempts logged before: a succeeded one has no error
UPDATE webhook_attempts SET outcome = CASE WHEN error IS NULL THEN 'succeeded' ELSE 'failed' END;
ALTER TABLE webhook_attempts
  ALTER COLUMN outcome SET NOT NULL,
  ADD CONSTRAINT webhook_attempts_outcome_known CHECK (outcome IN ('sending', 'succeeded', 'failed', 'interrupted')),
  -- a duration once the attempt ended with an answer or a failure of its own
  ADD CONSTRAINT webhook_attempts_duration_when_ended CHECK ((duration_ms IS NULL) = (outcome IN ('sending', 'interrupted')));
-- the attempts under way: the few rows each claim looks through for abandoned ones
CREATE INDEX webhook_attempts_sending_idx ON webhook_attempts (delivery_id) WHERE outcome = 'sending';

-- Down Migration
DROP INDEX webhook_attempts_sending_idx;
-- the attempts without an answer leave the log, as before this migration
DELETE FROM webhook_attempts WHERE outcome IN ('sending', 'interrupted');
ALTER TABLE webhook_attempts
  DROP CONSTRAINT webhook_attempts_duration_when_ended,
  DROP CONSTRAINT webhook_attempts_outcome_known,
  DROP COLUMN outcome,
  ALTER COLUMN duration_ms SET NOT NULL;
