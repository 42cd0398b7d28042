-- Up Migration

-- Approval rules of a grant travel with the attention they open: its quorum and approvers decide
-- who may answer, its reminder and escalation are scheduler timers. Answers before the quorum
-- are kept in `approvals`; an approval that edited the call keeps the edit (redacted, for
-- display) and the arguments the run is to use (`edited_arguments`, read by authorize only).
ALTER TABLE policy.attention
  ADD COLUMN rules jsonb,
  ADD COLUMN approvals jsonb NOT NULL DEFAULT '[]'::jsonb,
  ADD COLUMN remind_at timestamptz,
  ADD COLUMN reminded_at timestamptz,
  ADD COLUMN escalate_at timestamptz,
  ADD COLUMN escalated_at timestamptz,
  ADD COLUMN edit jsonb,
  ADD COLUMN edited_arguments jsonb,
  ADD COLUMN edited_call_digest char(64),
  ADD COLUMN edited_verb text,
  ADD COLUMN edited_resource_key text;
CREATE INDEX attention_edited_call ON policy.attention (run_id, edited_call_digest) WHERE edited_call_digest IS NOT NULL AND consumed_at IS NULL;

-- Down Migration
DROP INDEX policy.attention_edited_call;
ALTER TABLE policy.attention
  DROP COLUMN edited_resource_key, DROP COLUMN edited_verb, DROP COLUMN edited_call_digest, DROP COLUMN edited_arguments, DROP COLUMN edit,
  DROP COLUMN escalated_at, DROP COLUMN escalate_at, DROP COLUMN reminded_at, DROP COLUMN remind_at, DROP COLUMN approvals, DROP COLUMN rules;
