-- Up Migration

-- Computers: machines a worker's commands run on over SSH (docs/adr/0022-computers.md). The row
-- is the record as it stands (a versioned layout, read strictly: a newer or damaged one is refused,
-- never rewritten) beside the last probe's result; the history is the stream computer-<ws>-<name>.
CREATE TABLE sandbox.computers (
  workspace_id     text NOT NULL,
  name             text NOT NULL,
  record           jsonb NOT NULL,
  -- Stream version of the event that wrote the record: what a client sends back as expectedVersion.
  version          integer NOT NULL,
  -- The last probe (for "last observed"; status itself needs a probe this replica received in time).
  probed_at        timestamptz,
  probe_ok         boolean,
  probe_affirmative boolean,
  probe_detail     text,
  last_success_at  timestamptz,
  -- A host key the computer presented that is not pinned, and since when.
  presented_key    text,
  key_changed_at   timestamptz,
  PRIMARY KEY (workspace_id, name)
);

-- Commands on a computer: which one, and the process group to kill if the link is lost.
ALTER TABLE sandbox.execs ADD COLUMN computer text;
ALTER TABLE sandbox.execs ADD COLUMN remote_pgid integer;
ALTER TABLE sandbox.execs DROP CONSTRAINT execs_state_check;
ALTER TABLE sandbox.execs ADD CONSTRAINT execs_state_check CHECK (state IN ('running', 'exited', 'killed', 'failed', 'lost'));

-- Down Migration
ALTER TABLE sandbox.execs DROP CONSTRAINT execs_state_check;
ALTER TABLE sandbox.execs ADD CONSTRAINT execs_state_check CHECK (state IN ('running', 'exited', 'killed', 'failed'));
ALTER TABLE sandbox.execs DROP COLUMN remote_pgid;
ALTER TABLE sandbox.execs DROP COLUMN computer;
DROP TABLE sandbox.computers;
