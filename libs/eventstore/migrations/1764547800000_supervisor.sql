-- Up Migration

-- Which supervisor replica holds which run, until when. The run's stream version is the fence
-- for what a holder writes; the lease only keeps two replicas from working on one run at once
-- and lets recovery find runs whose holder went away. See docs/adr/0012-supervisor-claims.md.
CREATE SCHEMA supervisor;

CREATE TABLE supervisor.runs (
  run_id            text PRIMARY KEY,
  workspace_id      text NOT NULL,
  -- active: someone should be driving it; waiting: parked until an answer or a resume;
  -- terminal: done; quarantined: its events cannot be replayed, left for a person.
  status            text NOT NULL CHECK (status IN ('active', 'waiting', 'terminal', 'quarantined')),
  holder            text,
  lease_until       timestamptz,
  claims            integer NOT NULL DEFAULT 0,
  waiting_on        text,
  quarantine_reason text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX supervisor_runs_lapsed ON supervisor.runs (lease_until) WHERE status = 'active';
CREATE INDEX supervisor_runs_waiting_on ON supervisor.runs (waiting_on) WHERE waiting_on IS NOT NULL;

-- Down Migration
DROP SCHEMA supervisor CASCADE;
