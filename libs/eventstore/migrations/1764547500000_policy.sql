-- Up Migration

-- Policy: compiled grants per deployment and pinned effective digest, the runs they apply to,
-- attention records (approvals) and approve-for-run marks. Deployment and run rows are
-- projections of intake's events; attention rows change with their `attention-<id>` stream.
CREATE SCHEMA policy;

-- Compiled grants are content-addressed by the effective digest they were compiled from, so a
-- run keeps the grants of the version it was admitted under after a rollback.
CREATE TABLE policy.grant_sets (
  effective_digest  char(64) PRIMARY KEY,
  grants            jsonb NOT NULL,
  -- SHA-256 of the canonical JSON of {effectiveDigest, grants}: checked at every use.
  grants_digest     char(64) NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE policy.deployments (
  deployment_id     text PRIMARY KEY,
  workspace_id      text NOT NULL,
  status            text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'revoked')),
  version           integer,
  version_digest    char(64),
  effective_digest  char(64),
  grants            jsonb,
  grants_digest     char(64),
  -- Global position of the last event applied: an event at or below it is a repeat.
  last_position     bigint NOT NULL DEFAULT 0,
  updated_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE policy.runs (
  run_id            text PRIMARY KEY,
  workspace_id      text NOT NULL,
  deployment_id     text NOT NULL,
  version_digest    char(64) NOT NULL,
  effective_digest  char(64) NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX runs_deployment ON policy.runs (deployment_id);

CREATE TABLE policy.attention (
  attention_id      uuid PRIMARY KEY,
  workspace_id      text NOT NULL,
  run_id            text NOT NULL,
  deployment_id     text NOT NULL,
  version_digest    char(64) NOT NULL,
  call_digest       char(64) NOT NULL,
  tool              text NOT NULL,
  verb              text NOT NULL,
  -- Redacted, for display; resource_key is the normalised form calls are compared by.
  resource          text,
  resource_key      text NOT NULL,
  approval_mode     text NOT NULL CHECK (approval_mode IN ('always', 'first_use')),
  arguments         jsonb NOT NULL,
  requester         jsonb NOT NULL,
  state             text NOT NULL CHECK (state IN ('open', 'approved', 'rejected', 'expired', 'withdrawn')),
  scope             text CHECK (scope IN ('once', 'run')),
  answered_by       jsonb,
  answer_reason     text,
  deadline          timestamptz NOT NULL,
  answered_at       timestamptz,
  -- Set when a call used an approve-once approval; a consumed record no longer covers anything.
  consumed_at       timestamptz,
  timer_set         boolean NOT NULL DEFAULT false,
  stream_version    bigint NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now()
);
-- At most one live record per run and call: asking again returns the same one.
CREATE UNIQUE INDEX attention_live_call ON policy.attention (run_id, call_digest) WHERE consumed_at IS NULL;
CREATE INDEX attention_workspace ON policy.attention (workspace_id, state, created_at);
CREATE INDEX attention_open_by_deployment ON policy.attention (deployment_id) WHERE state = 'open';

-- Approve-for-run (and an approved first use): identical calls in the run need no new approval.
CREATE TABLE policy.run_approvals (
  run_id        text NOT NULL,
  tool          text NOT NULL,
  verb          text NOT NULL,
  resource_key  text NOT NULL,
  attention_id  uuid NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, tool, verb, resource_key)
);

-- Down Migration

DROP SCHEMA policy CASCADE;
