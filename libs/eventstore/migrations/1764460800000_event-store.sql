-- Up Migration

-- One row per stream: the current version is the optimistic-concurrency check and the fence
-- (a conditional UPDATE of this row serialises writers of one stream), and last_digest is the
-- head of the stream's hash chain.
CREATE TABLE streams (
  stream_id     text PRIMARY KEY,
  workspace_id  text NOT NULL,
  category      text NOT NULL,
  version       bigint NOT NULL CHECK (version >= 0),
  last_digest   char(64),
  updated_at    timestamptz NOT NULL DEFAULT now()
);

-- CACHE 1 keeps positions monotonic in allocation order across sessions, which the relay's
-- gap reasoning depends on (see docs/adr/0002-relay-high-water-mark.md).
CREATE SEQUENCE events_global_position_seq AS bigint START 1 CACHE 1;

CREATE TABLE events (
  global_position  bigint PRIMARY KEY DEFAULT nextval('events_global_position_seq'),
  event_id         uuid NOT NULL UNIQUE,
  stream_id        text NOT NULL REFERENCES streams (stream_id),
  stream_version   bigint NOT NULL CHECK (stream_version >= 1),
  type             text NOT NULL,
  schema_version   integer NOT NULL CHECK (schema_version >= 1),
  workspace_id     text NOT NULL,
  occurred_at      timestamptz NOT NULL,
  data             jsonb NOT NULL,
  metadata         jsonb NOT NULL,
  digest           char(64) NOT NULL,
  prev_digest      char(64),
  transaction_id   xid8 NOT NULL DEFAULT pg_current_xact_id(),
  UNIQUE (stream_id, stream_version)
);
ALTER SEQUENCE events_global_position_seq OWNED BY events.global_position;

CREATE INDEX events_workspace_position ON events (workspace_id, global_position);

-- The log is append-only: updates and deletes are refused at the database, so only someone
-- who can disable triggers can rewrite history, and the digest chain exposes that.
CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'events are append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
  FOR EACH ROW EXECUTE FUNCTION events_append_only();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();

CREATE TABLE snapshots (
  stream_id       text NOT NULL REFERENCES streams (stream_id),
  name            text NOT NULL,
  stream_version  bigint NOT NULL,
  schema_version  integer NOT NULL,
  state           jsonb NOT NULL,
  digest          char(64) NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (stream_id, name)
);

-- Where each relay has got to: the last global position acknowledged by JetStream, and when
-- it last moved (readiness uses it to tell a stalled relay from an idle one).
CREATE TABLE relay_cursors (
  name        text PRIMARY KEY,
  position    bigint NOT NULL DEFAULT 0,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- The whole append in one round trip: concurrency check against the stream head, the events in
-- order, and the new head, inside the caller's transaction. The first statement forces a
-- transaction id before any position is allocated: the relay's gap rule relies on every holder
-- of an allocated position being visible as in progress in later snapshots.
CREATE FUNCTION pa_append_events(
  p_stream text,
  p_workspace text,
  p_category text,
  p_expected bigint,
  p_prev_digest char(64),
  p_head_digest char(64),
  p_events jsonb
) RETURNS TABLE (status text, actual_version bigint, first_position bigint, last_position bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_count   bigint := jsonb_array_length(p_events);
  v_current bigint;
  v_ws      text;
  v_digest  char(64);
BEGIN
  PERFORM pg_current_xact_id();
  IF p_expected = 0 THEN
    INSERT INTO streams (stream_id, workspace_id, category, version, last_digest)
      VALUES (p_stream, p_workspace, p_category, v_count, p_head_digest)
      ON CONFLICT (stream_id) DO NOTHING;
    IF NOT FOUND THEN
      SELECT s.version INTO v_current FROM streams s WHERE s.stream_id = p_stream;
      RETURN QUERY SELECT 'conflict'::text, v_current, NULL::bigint, NULL::bigint;
      RETURN;
    END IF;
  ELSE
    -- The common case in one statement: move the head if it is where the writer expects.
    UPDATE streams SET version = p_expected + v_count, last_digest = p_head_digest, updated_at = now()
     WHERE stream_id = p_stream AND version = p_expected AND workspace_id = p_workspace
       AND last_digest IS NOT DISTINCT FROM p_prev_digest;
    IF NOT FOUND THEN
      SELECT s.version, s.workspace_id, s.last_digest INTO v_current, v_ws, v_digest
        FROM streams s WHERE s.stream_id = p_stream;
      RETURN QUERY SELECT
        CASE WHEN NOT FOUND OR v_current <> p_expected THEN 'conflict'
             WHEN v_ws <> p_workspace THEN 'wrong_workspace'
             ELSE 'stale_head' END,
        coalesce(v_current, 0), NULL::bigint, NULL::bigint;
      RETURN;
    END IF;
  END IF;

  RETURN QUERY
  WITH inserted AS (
    INSERT INTO events (event_id, stream_id, stream_version, type, schema_version, workspace_id,
                        occurred_at, data, metadata, digest, prev_digest)
    SELECT (e.r->>'id')::uuid, p_stream, p_expected + e.n, e.r->>'type', (e.r->>'schemaVersion')::int,
           p_workspace, (e.r->>'occurredAt')::timestamptz, e.r->'data', e.r->'metadata',
           e.r->>'digest', e.r->>'prevDigest'
      FROM jsonb_array_elements(p_events) WITH ORDINALITY AS e(r, n)
     ORDER BY e.n
    RETURNING global_position
  )
  SELECT 'ok'::text, p_expected + v_count, min(i.global_position), max(i.global_position) FROM inserted i;
END;
$$;

-- Down Migration

DROP FUNCTION pa_append_events(text, text, text, bigint, char, char, jsonb);
DROP TABLE relay_cursors;
DROP TABLE snapshots;
DROP TABLE events;
DROP FUNCTION events_append_only();
DROP TABLE streams;
