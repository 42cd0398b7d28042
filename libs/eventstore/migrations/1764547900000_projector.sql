-- Up Migration

-- Read models of the operations views, kept by the projector from PA_EVENTS. Each projection
-- stores the last global position it applied in `projector.checkpoints`, in the same
-- transaction as its rows. The tables below are generated from the projection definitions in
-- libs/projections (a rebuild creates the same ones in a shadow schema and swaps them in; see
-- docs/adr/0015-projections.md): change both together.
CREATE SCHEMA projector;

-- Events the projector could not decode (unknown type, newer schema version, malformed), kept
-- so that none is skipped silently; the overview reports them. Not part of any projection: a
-- rebuild adds to it and never replaces it.
CREATE TABLE projector.gaps (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  global_position  bigint UNIQUE,
  workspace_id     text,
  stream_id        text,
  type             text,
  code             text NOT NULL,
  reason           text NOT NULL,
  recorded_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX gaps_workspace ON projector.gaps (workspace_id);

CREATE TABLE projector.checkpoints (
  projection text PRIMARY KEY,
  position bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE projector.workers (
  worker_id text NOT NULL,
  workspace_id text NOT NULL,
  name text NOT NULL,
  description text NOT NULL,
  latest_version integer,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (worker_id)
);

CREATE INDEX workers_workspace_id_name ON projector.workers (workspace_id, name);

CREATE TABLE projector.versions (
  worker_id text NOT NULL,
  version integer NOT NULL,
  workspace_id text NOT NULL,
  digest text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (worker_id, version)
);

CREATE INDEX versions_workspace_id ON projector.versions (workspace_id);

CREATE TABLE projector.deployments (
  deployment_id text NOT NULL,
  workspace_id text NOT NULL,
  worker_id text NOT NULL,
  worker_name text NOT NULL,
  version integer NOT NULL,
  digest text NOT NULL,
  effective_digest text NOT NULL,
  state text NOT NULL,
  state_reason text,
  max_concurrent_runs integer NOT NULL,
  triggers jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (deployment_id)
);

CREATE INDEX deployments_workspace_id_state ON projector.deployments (workspace_id, state);

CREATE TABLE projector.runs (
  run_id text NOT NULL,
  workspace_id text NOT NULL,
  deployment_id text NOT NULL,
  worker_id text NOT NULL,
  worker_name text NOT NULL,
  version integer NOT NULL,
  source text NOT NULL,
  state text NOT NULL,
  hold_reason text,
  phase text,
  iteration integer NOT NULL,
  tool_calls integer NOT NULL,
  cost_usd double precision NOT NULL,
  bounds jsonb,
  remaining jsonb,
  waiting_reason text,
  waiting_attention_id text,
  last_checkpoint_seq integer,
  last_checkpoint_digest text,
  last_checkpoint_at timestamptz,
  outcome_type text,
  outcome_reason text,
  outcome_detail text,
  model jsonb,
  created_at timestamptz NOT NULL,
  started_at timestamptz,
  ended_at timestamptz,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (run_id)
);

CREATE INDEX runs_workspace_id_state ON projector.runs (workspace_id, state);

CREATE INDEX runs_workspace_id_ended_at ON projector.runs (workspace_id, ended_at);

CREATE TABLE projector.run_timeline (
  global_position bigint NOT NULL,
  workspace_id text NOT NULL,
  run_id text NOT NULL,
  stream_version integer NOT NULL,
  type text NOT NULL,
  occurred_at timestamptz NOT NULL,
  summary jsonb NOT NULL,
  PRIMARY KEY (global_position)
);

CREATE INDEX run_timeline_run_id_stream_version ON projector.run_timeline (run_id, stream_version);

CREATE TABLE projector.attention (
  attention_id text NOT NULL,
  workspace_id text NOT NULL,
  run_id text NOT NULL,
  deployment_id text NOT NULL,
  tool text NOT NULL,
  verb text NOT NULL,
  resource text,
  state text NOT NULL,
  requested_at timestamptz NOT NULL,
  deadline timestamptz NOT NULL,
  answered_at timestamptz,
  answered_by jsonb,
  scope text,
  reason text,
  PRIMARY KEY (attention_id)
);

CREATE INDEX attention_workspace_id_state ON projector.attention (workspace_id, state);

CREATE TABLE projector.budget_usage (
  workspace_id text NOT NULL,
  kind text NOT NULL,
  owner_id text NOT NULL,
  unit text NOT NULL,
  win text NOT NULL,
  held bigint NOT NULL,
  spent bigint NOT NULL,
  warned_limit bigint,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, kind, owner_id, unit, win)
);

CREATE TABLE projector.budget_spend (
  workspace_id text NOT NULL,
  day text NOT NULL,
  unit text NOT NULL,
  spent bigint NOT NULL,
  PRIMARY KEY (workspace_id, day, unit)
);

-- Down Migration
DROP SCHEMA IF EXISTS projector_rebuild CASCADE;
DROP SCHEMA IF EXISTS projector_retired CASCADE;
DROP SCHEMA projector CASCADE;
