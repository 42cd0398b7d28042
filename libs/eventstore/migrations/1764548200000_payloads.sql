-- Up Migration

-- Event fields too large to carry inline (model transcripts, tool arguments and results),
-- stored by content: the event holds {"$payload": {digest, size, mediaType}} in their place
-- (docs/adr/0019-payloads-by-reference.md). Keyed by workspace first, so the same bytes stored
-- by two workspaces are two rows and no workspace can read, or learn of, another's.
CREATE SCHEMA eventstore;

CREATE TABLE eventstore.payloads (
  workspace_id  text NOT NULL,
  -- SHA-256 (hex) of content: the key is the claim every reader checks.
  digest        char(64) NOT NULL CHECK (digest ~ '^[0-9a-f]{64}$'),
  size          bigint NOT NULL CHECK (size = octet_length(content)),
  media_type    text NOT NULL,
  content       bytea NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, digest)
);

-- Content never changes under its digest. Deleting a row stays possible for retention, which
-- audit verification reports as a missing payload until a deletion event records it.
CREATE FUNCTION eventstore.payloads_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'stored payloads are immutable (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER payloads_immutable BEFORE UPDATE ON eventstore.payloads
  FOR EACH ROW EXECUTE FUNCTION eventstore.payloads_immutable();

-- Down Migration
DROP SCHEMA eventstore CASCADE;
