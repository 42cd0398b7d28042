-- Up Migration

-- The budget ledger. Limits are projected from deployment and run events; holds and spend are
-- written by the reserve / settle / release / expire commands in the same transaction as the
-- event announcing them. See docs/adr/0010-budget-reservations.md.
CREATE SCHEMA budget;

-- The limits each pinned (deployment, effective digest) declares; a run takes its run limits
-- from the limit set of the digest it was admitted with.
CREATE TABLE budget.limit_sets (
  deployment_id     text NOT NULL,
  effective_digest  text NOT NULL,
  workspace_id      text NOT NULL,
  budgets           jsonb NOT NULL,
  PRIMARY KEY (deployment_id, effective_digest)
);

-- Where the projection of each deployment's events has got to (an event at or below it is a
-- redelivery and changes nothing), and the limits currently in force.
CREATE TABLE budget.deployments (
  deployment_id     text PRIMARY KEY,
  workspace_id      text NOT NULL,
  effective_digest  text,
  budgets           jsonb NOT NULL DEFAULT '{}'::jsonb,
  revoked           boolean NOT NULL DEFAULT false,
  last_position     bigint NOT NULL DEFAULT 0,
  updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX budget_deployments_by_workspace ON budget.deployments (workspace_id);

-- Runs known from run.admitted; run scopes are created from the pinned limit set on first use.
CREATE TABLE budget.runs (
  run_id            text PRIMARY KEY,
  workspace_id      text NOT NULL,
  deployment_id     text NOT NULL,
  effective_digest  text NOT NULL,
  scopes_created    boolean NOT NULL DEFAULT false,
  last_position     bigint NOT NULL DEFAULT 0,
  created_at        timestamptz NOT NULL DEFAULT now()
);

-- One row per limited ledger. Every change to a scope's spend or holds first locks its row
-- (FOR UPDATE, in scope_ref order), which serialises writers of a scope across replicas.
-- limit_amount NULL: the limit was withdrawn; the scope no longer limits or records anything.
CREATE TABLE budget.scopes (
  scope_ref       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workspace_id    text NOT NULL,
  kind            text NOT NULL CHECK (kind IN ('run', 'deployment', 'workspace')),
  owner_id        text NOT NULL,
  unit            text NOT NULL,
  win             text NOT NULL CHECK (win IN ('run', 'hour', 'day', '30d')),
  limit_amount    bigint CHECK (limit_amount >= 0),
  blocked_at      timestamptz,
  warned_at       timestamptz,
  stream_version  bigint NOT NULL DEFAULT 0,
  UNIQUE (kind, owner_id, unit, win)
);
CREATE INDEX budget_scopes_by_workspace ON budget.scopes (workspace_id, scope_ref DESC);

-- Settled spend per scope and time bucket (minute for hour, hour for day, day for 30d, one
-- bucket for run).
CREATE TABLE budget.buckets (
  scope_ref     bigint NOT NULL REFERENCES budget.scopes (scope_ref),
  bucket_start  timestamptz NOT NULL,
  spent         bigint NOT NULL CHECK (spent >= 0),
  PRIMARY KEY (scope_ref, bucket_start)
);

CREATE TABLE budget.reservations (
  reservation_id   text PRIMARY KEY,
  workspace_id     text NOT NULL,
  run_id           text NOT NULL,
  idempotency_key  text NOT NULL,
  amounts          jsonb NOT NULL,
  state            text NOT NULL CHECK (state IN ('held', 'settled', 'released', 'expired')),
  expires_at       timestamptz NOT NULL,
  created_at       timestamptz NOT NULL,
  finished_at      timestamptz,
  -- Version of budget-<reservation_id> this row reflects: the expected version of the next append.
  stream_version   bigint NOT NULL CHECK (stream_version >= 1),
  UNIQUE (workspace_id, idempotency_key)
);
CREATE INDEX budget_reservations_expiring ON budget.reservations (expires_at) WHERE state = 'held';

-- The live holds of held reservations, one row per scope. A hold counts while expires_at is
-- in the future; the row goes when the reservation settles, is released or expires.
CREATE TABLE budget.holds (
  reservation_id  text NOT NULL REFERENCES budget.reservations (reservation_id),
  scope_ref       bigint NOT NULL REFERENCES budget.scopes (scope_ref),
  amount          bigint NOT NULL CHECK (amount >= 0),
  expires_at      timestamptz NOT NULL,
  PRIMARY KEY (reservation_id, scope_ref)
);
CREATE INDEX budget_holds_by_scope ON budget.holds (scope_ref, expires_at) INCLUDE (amount);

-- The bucket a spend at `at` falls in.
CREATE FUNCTION budget.bucket_start(win text, at timestamptz) RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE win
    WHEN 'run'  THEN 'epoch'::timestamptz
    WHEN 'hour' THEN date_trunc('minute', at, 'UTC')
    WHEN 'day'  THEN date_trunc('hour', at, 'UTC')
    WHEN '30d'  THEN date_trunc('day', at, 'UTC')
  END
$$;

-- The oldest bucket still inside the window ending at `at`. The whole oldest bucket counts, so
-- a spend is remembered for at least the window's length (up to one bucket longer), never less.
CREATE FUNCTION budget.window_floor(win text, at timestamptz) RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE win
    WHEN 'run'  THEN '-infinity'::timestamptz
    WHEN 'hour' THEN date_trunc('minute', at, 'UTC') - interval '1 hour'
    WHEN 'day'  THEN date_trunc('hour', at, 'UTC') - interval '1 day'
    WHEN '30d'  THEN date_trunc('day', at, 'UTC') - interval '30 days'
  END
$$;

-- Down Migration

DROP FUNCTION budget.window_floor(text, timestamptz);
DROP FUNCTION budget.bucket_start(text, timestamptz);
DROP TABLE budget.holds;
DROP TABLE budget.reservations;
DROP TABLE budget.buckets;
DROP TABLE budget.scopes;
DROP TABLE budget.runs;
DROP TABLE budget.deployments;
DROP TABLE budget.limit_sets;
DROP SCHEMA budget;
