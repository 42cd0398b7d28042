-- Up Migration

-- Intake's write model: the state its deciders read, kept in the same transaction as the
-- events that announce each change (the events remain the record; these rows are the
-- current state intake needs to decide quickly and to lock on).
CREATE SCHEMA intake;

CREATE TABLE intake.workers (
  id              text PRIMARY KEY,
  workspace_id    text NOT NULL,
  name            text NOT NULL,
  description     text NOT NULL,
  latest_version  integer NOT NULL DEFAULT 0,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, name)
);
CREATE INDEX workers_by_workspace ON intake.workers (workspace_id, id DESC);

CREATE TABLE intake.versions (
  worker_id     text NOT NULL REFERENCES intake.workers (id),
  version       integer NOT NULL CHECK (version >= 1),
  workspace_id  text NOT NULL,
  digest        char(64) NOT NULL,
  definition    jsonb NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (worker_id, version)
);

CREATE TABLE intake.deployments (
  id                   text PRIMARY KEY,
  workspace_id         text NOT NULL,
  worker_id            text NOT NULL REFERENCES intake.workers (id),
  worker_name          text NOT NULL,
  version              integer NOT NULL,
  digest               char(64) NOT NULL,
  effective_digest     char(64) NOT NULL,
  effective            jsonb NOT NULL,
  overrides            jsonb NOT NULL,
  triggers             jsonb NOT NULL,
  status               text NOT NULL CHECK (status IN ('active', 'paused', 'revoked')),
  status_reason        text,
  max_concurrent_runs  integer NOT NULL CHECK (max_concurrent_runs >= 1),
  active_runs          integer NOT NULL DEFAULT 0 CHECK (active_runs >= 0),
  held_runs            integer NOT NULL DEFAULT 0 CHECK (held_runs >= 0),
  stream_version       bigint NOT NULL,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX deployments_by_workspace ON intake.deployments (workspace_id, id DESC);

-- Trigger ids are derived from the deployment and the trigger's key, so a rollback keeps a
-- webhook URL that still exists in the new version.
CREATE TABLE intake.triggers (
  trigger_id      text PRIMARY KEY,
  deployment_id   text NOT NULL REFERENCES intake.deployments (id),
  workspace_id    text NOT NULL,
  key             text NOT NULL,
  kind            text NOT NULL,
  spec            jsonb NOT NULL,
  -- Until the vault exists the HMAC key is stored here; it never enters an event or a log.
  webhook_secret  text,
  active          boolean NOT NULL DEFAULT true
);
CREATE INDEX triggers_by_kind ON intake.triggers (workspace_id, kind) WHERE active;

CREATE TABLE intake.runs (
  id              text PRIMARY KEY,
  workspace_id    text NOT NULL,
  deployment_id   text NOT NULL REFERENCES intake.deployments (id),
  worker_id       text NOT NULL,
  version         integer NOT NULL,
  digest          char(64) NOT NULL,
  state           text NOT NULL,
  hold            text,
  stop_requested  boolean NOT NULL DEFAULT false,
  pause_requested boolean NOT NULL DEFAULT false,
  source          text NOT NULL,
  trigger_id      text,
  activation_id   text NOT NULL,
  dedupe_key      text NOT NULL,
  stream_version  bigint NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  -- The exactly-once rule for activations: one run per (deployment, dedupe key).
  UNIQUE (deployment_id, dedupe_key)
);
CREATE INDEX runs_by_workspace ON intake.runs (workspace_id, id DESC);
CREATE INDEX runs_held ON intake.runs (deployment_id, created_at, id) WHERE hold IS NOT NULL;

-- Activation inputs too large to travel inside an event, referenced by id and digest.
CREATE TABLE intake.payloads (
  id            text PRIMARY KEY,
  workspace_id  text NOT NULL,
  digest        char(64) NOT NULL,
  bytes         integer NOT NULL,
  content       jsonb NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP SCHEMA intake CASCADE;
