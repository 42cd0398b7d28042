-- Up Migration

-- The catalogue of streams, written once when a stream is created: it fixes which workspace
-- owns the stream. Versions live only in events: the unique (stream_id, stream_version) index
-- is the optimistic-concurrency check and the fence (docs/adr/0005-append-concurrency.md).
CREATE TABLE streams (
  stream_id     text PRIMARY KEY,
  workspace_id  text NOT NULL,
  category      text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);

-- CACHE 1 keeps positions monotonic in allocation order across sessions, which the relay's
-- gap reasoning depends on (see docs/adr/0002-relay-high-water-mark.md).
CREATE SEQUENCE events_global_position_seq AS bigint START 1 CACHE 1;

CREATE TABLE events (
  global_position  bigint PRIMARY KEY,
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

-- A row inserted without a position takes it here, after its transaction has an id: the
-- relay's gap rule relies on every holder of an allocated position being visible as running
-- to later snapshots (docs/adr/0002-relay-high-water-mark.md). The WHEN clause is evaluated
-- without calling the function, so pa_append_events, which takes the id once and then
-- allocates positions for a whole batch itself, pays nothing per row.
CREATE FUNCTION events_assign_position() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_current_xact_id();
  NEW.global_position := nextval('events_global_position_seq');
  RETURN NEW;
END;
$$;
CREATE TRIGGER events_assign_position BEFORE INSERT ON events
  FOR EACH ROW WHEN (NEW.global_position IS NULL) EXECUTE FUNCTION events_assign_position();

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

-- A multi-event append in one round trip, inside the caller's transaction (single events use
-- a plain INSERT from the client). A writer that lost a race fails on the unique (stream_id, stream_version) index (SQLSTATE
-- 23505), which the client reports as a concurrency conflict; nothing of the append remains.
CREATE FUNCTION pa_append_events(
  p_stream text,
  p_workspace text,
  p_category text,
  p_expected bigint,
  p_prev_digest char(64),
  p_events jsonb
) RETURNS TABLE (status text, actual_version bigint, first_position bigint, last_position bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_ws      text;
  v_digest  char(64);
BEGIN
  -- The transaction id first, then the positions (see events_assign_position).
  PERFORM pg_current_xact_id();
  IF p_expected = 0 THEN
    INSERT INTO streams (stream_id, workspace_id, category)
      VALUES (p_stream, p_workspace, p_category)
      ON CONFLICT (stream_id) DO NOTHING;
    IF NOT FOUND THEN
      RETURN QUERY SELECT 'conflict'::text, coalesce(max(e.stream_version), 0), NULL::bigint, NULL::bigint
        FROM events e WHERE e.stream_id = p_stream;
      RETURN;
    END IF;
  ELSE
    -- The event the writer builds on must exist, belong to its workspace and be the head it
    -- linked to; a later event makes the insert below fail on the unique index.
    SELECT e.workspace_id, e.digest INTO v_ws, v_digest
      FROM events e WHERE e.stream_id = p_stream AND e.stream_version = p_expected;
    IF NOT FOUND THEN
      RETURN QUERY SELECT 'conflict'::text, coalesce(max(e.stream_version), 0), NULL::bigint, NULL::bigint
        FROM events e WHERE e.stream_id = p_stream;
      RETURN;
    END IF;
    IF v_ws <> p_workspace THEN
      RETURN QUERY SELECT 'wrong_workspace'::text, p_expected, NULL::bigint, NULL::bigint;
      RETURN;
    END IF;
    IF v_digest IS DISTINCT FROM p_prev_digest THEN
      RETURN QUERY SELECT 'stale_head'::text, p_expected, NULL::bigint, NULL::bigint;
      RETURN;
    END IF;
  END IF;

  RETURN QUERY
  WITH inserted AS (
    INSERT INTO events (global_position, event_id, stream_id, stream_version, type, schema_version,
                        workspace_id, occurred_at, data, metadata, digest, prev_digest)
    SELECT nextval('events_global_position_seq'), (e.r->>'id')::uuid, p_stream, p_expected + e.n, e.r->>'type', (e.r->>'schemaVersion')::int,
           p_workspace, (e.r->>'occurredAt')::timestamptz, e.r->'data', e.r->'metadata',
           e.r->>'digest', e.r->>'prevDigest'
      FROM jsonb_array_elements(p_events) WITH ORDINALITY AS e(r, n)
     ORDER BY e.n
    RETURNING global_position
  )
  SELECT 'ok'::text, p_expected + count(*), min(i.global_position), max(i.global_position) FROM inserted i;
END;
$$;

-- Down Migration

DROP FUNCTION pa_append_events(text, text, text, bigint, char, jsonb);
DROP TABLE relay_cursors;
DROP TABLE snapshots;
DROP TABLE events;
DROP FUNCTION events_append_only();
DROP FUNCTION events_assign_position();
DROP TABLE streams;
