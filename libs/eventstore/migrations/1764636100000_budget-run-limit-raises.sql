-- Up Migration

-- Raises of a run's own limit after a person approved its budget request, one per attention:
-- a repeat (the supervisor crashed before recording the raise) answers the first one.
CREATE TABLE budget.run_limit_raises (
  attention_id  text PRIMARY KEY,
  workspace_id  text NOT NULL,
  run_id        text NOT NULL,
  scope_ref     bigint NOT NULL REFERENCES budget.scopes (scope_ref),
  requested     bigint NOT NULL CHECK (requested > 0),
  raised        bigint NOT NULL CHECK (raised >= 0),
  limit_before  bigint NOT NULL,
  limit_after   bigint NOT NULL,
  capped_by     jsonb,
  raised_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX budget_run_limit_raises_by_run ON budget.run_limit_raises (run_id);

-- Down Migration

DROP TABLE budget.run_limit_raises;
