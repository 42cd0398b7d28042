-- Up Migration

-- Which replica holds each run's MCP sessions (docs/adr/0023-mcp-tools.md): a run's calls and its
-- close go to that replica (its sessions and stdio server processes live there); a holder that
-- stopped answering is replaced, and the run gets fresh sessions.
CREATE TABLE sandbox.mcp_holders (
  workspace_id  text NOT NULL,
  run_id        text NOT NULL,
  replica       text NOT NULL,
  opened_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, run_id)
);

CREATE INDEX sandbox_mcp_holders_by_replica ON sandbox.mcp_holders (replica);

-- Down Migration
DROP TABLE sandbox.mcp_holders;
