-- Up Migration

-- The scheduler's state: cron schedules projected from deployment events, and durable timers
-- (the rows are the current state of each timer stream, written in the same transaction as
-- the event that changes it).
CREATE SCHEMA scheduler;

-- Where the projection of each deployment's events has got to: an event at or below this
-- global position was applied already (a redelivery or a republished copy) and is ignored.
CREATE TABLE scheduler.deployments (
  deployment_id  text PRIMARY KEY,
  workspace_id   text NOT NULL,
  last_position  bigint NOT NULL DEFAULT 0,
  revoked        boolean NOT NULL DEFAULT false,
  updated_at     timestamptz NOT NULL DEFAULT now()
);

-- One row per cron trigger binding. next_due_at is the earliest scheduled instant not yet
-- handled (fired or skipped); NULL when the expression has no future instant.
CREATE TABLE scheduler.schedules (
  trigger_id     text PRIMARY KEY,
  workspace_id   text NOT NULL,
  deployment_id  text NOT NULL REFERENCES scheduler.deployments (deployment_id),
  expression     text NOT NULL,
  timezone       text NOT NULL,
  missed         text NOT NULL CHECK (missed IN ('skip', 'fire_once')),
  next_due_at    timestamptz,
  -- The scheduled instant of the last activation intake accepted.
  last_fired_at  timestamptz,
  active         boolean NOT NULL DEFAULT true,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX schedules_due ON scheduler.schedules (next_due_at) WHERE active AND next_due_at IS NOT NULL;
CREATE INDEX schedules_by_deployment ON scheduler.schedules (deployment_id);

CREATE TABLE scheduler.timers (
  timer_id        text PRIMARY KEY,
  workspace_id    text NOT NULL,
  purpose         text NOT NULL,
  due_at          timestamptz NOT NULL,
  state           text NOT NULL CHECK (state IN ('pending', 'fired', 'cancelled')),
  payload         jsonb NOT NULL,
  fired_at        timestamptz,
  -- Version of timer-<timer_id> this row reflects: the expected version of the next append.
  stream_version  bigint NOT NULL CHECK (stream_version >= 1),
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX timers_due ON scheduler.timers (due_at) WHERE state = 'pending';

-- Down Migration

DROP TABLE scheduler.timers;
DROP TABLE scheduler.schedules;
DROP TABLE scheduler.deployments;
DROP SCHEMA scheduler;
