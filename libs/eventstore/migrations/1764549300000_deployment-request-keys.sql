-- Up Migration

-- A deployment may be created under a request key (PacketADE's idempotency key): the same key
-- in the workspace answers the deployment it made, so a client that retries after losing the
-- answer does not deploy twice. Keys are optional; deployments made without one have NULL.
-- request_digest is the effective digest the key created, kept when the deployment later moves
-- to another version, so a retry is compared with what it first asked for.
ALTER TABLE intake.deployments
  ADD COLUMN request_key text CHECK (length(request_key) BETWEEN 1 AND 300),
  ADD COLUMN request_digest char(64),
  ADD CONSTRAINT deployments_request_key_digest CHECK ((request_key IS NULL) = (request_digest IS NULL));
CREATE UNIQUE INDEX deployments_request_key ON intake.deployments (workspace_id, request_key) WHERE request_key IS NOT NULL;

-- Down Migration
DROP INDEX intake.deployments_request_key;
ALTER TABLE intake.deployments DROP CONSTRAINT deployments_request_key_digest, DROP COLUMN request_digest, DROP COLUMN request_key;
