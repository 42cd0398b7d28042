-- Up Migration

-- The stuck-run watchdog: one leader replica at a time looks for runs no one drives
-- (docs/adr/0020-stuck-run-watchdog.md).

-- Admissions only, by position: a sweep reads the admissions after its cursor and nothing else
-- of the log, however long the log grows. One small entry per run. Built here inside the
-- migration's transaction, which holds appends back while it builds: on a large existing log,
-- create it CONCURRENTLY by hand first and this statement leaves it be.
CREATE INDEX IF NOT EXISTS events_run_admitted ON events (global_position) WHERE type = 'run.admitted';

-- Quarantined runs wait for a person; the watchdog counts them and makes sure one is told.
CREATE INDEX supervisor_runs_quarantined ON supervisor.runs (updated_at) WHERE status = 'quarantined';

-- The watchdog's cursor: every admission at or below `admitted_after` was claimed or ended when
-- a sweep passed it (both are for good), so no later sweep reads it again. Positions are read
-- only up to the relay's cursor, below which no transaction can still commit an event.
CREATE TABLE supervisor.watchdog (
  name            text PRIMARY KEY,
  admitted_after  bigint NOT NULL DEFAULT 0,
  swept_at        timestamptz,
  sweep_ms        integer
);

-- What the last sweep found, one row per run and cause for as long as the cause lasts; the row
-- goes when the cause does. The attention raised for a cause is kept here, so it is raised once
-- however often the sweep passes and whichever replica leads.
CREATE TABLE supervisor.watchdog_findings (
  run_id         text NOT NULL,
  cause          text NOT NULL CHECK (cause IN ('unclaimed', 'lapsed', 'wait_lost', 'wait_answered', 'quarantined')),
  workspace_id   text NOT NULL,
  detail         text NOT NULL,
  first_seen_at  timestamptz NOT NULL,
  last_seen_at   timestamptz NOT NULL,
  -- Wakes the watchdog sent, and those after which the cause was still there.
  wakes          integer NOT NULL DEFAULT 0,
  failed_wakes   integer NOT NULL DEFAULT 0,
  attention_id   text,
  PRIMARY KEY (run_id, cause)
);

-- Down Migration
DROP TABLE supervisor.watchdog_findings;
DROP TABLE supervisor.watchdog;
DROP INDEX supervisor.supervisor_runs_quarantined;
DROP INDEX events_run_admitted;
