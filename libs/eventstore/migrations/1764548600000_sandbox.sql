-- Up Migration

-- The sandbox service: one row per command run in a sandbox (docs/adr/0021-sandbox-drivers.md).
-- The row is the sandbox's own record of the exec; a run's record of it is the tool result in the
-- run's stream. Output lives in eventstore.payloads by reference (see `result`).
CREATE SCHEMA IF NOT EXISTS sandbox;

CREATE TABLE sandbox.execs (
  workspace_id  text NOT NULL,
  exec_id       text NOT NULL,
  run_id        text,
  argv          jsonb NOT NULL,
  cwd           text NOT NULL,
  state         text NOT NULL CHECK (state IN ('running', 'exited', 'killed', 'failed')),
  driver        text,
  exit_code     integer,
  limit_name    text,
  requested_by  jsonb NOT NULL,
  -- The replica running it, so a cancel reaching another replica is forwarded to it.
  replica       text NOT NULL,
  -- The whole ExecResult once it ended.
  result        jsonb,
  started_at    timestamptz NOT NULL,
  ended_at      timestamptz,
  PRIMARY KEY (workspace_id, exec_id)
);

CREATE INDEX sandbox_execs_recent ON sandbox.execs (workspace_id, started_at DESC);
CREATE INDEX sandbox_execs_by_run ON sandbox.execs (workspace_id, run_id, started_at DESC) WHERE run_id IS NOT NULL;
CREATE INDEX sandbox_execs_running ON sandbox.execs (replica) WHERE state = 'running';

-- Which replica holds each run's browser context: a run's actions go to that replica (its page,
-- cookies and storage live there); a holder that stopped answering is replaced.
CREATE TABLE sandbox.browser_sessions (
  workspace_id  text NOT NULL,
  run_id        text NOT NULL,
  replica       text NOT NULL,
  opened_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, run_id)
);

-- Down Migration
DROP SCHEMA sandbox CASCADE;
