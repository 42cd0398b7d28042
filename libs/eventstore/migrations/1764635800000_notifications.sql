-- Up Migration

-- The notifications outbox: one row per (source event, route), written in the transaction that
-- appends its `notification.queued`. A replica leases due rows (lease_owner, lease_until) with
-- FOR UPDATE SKIP LOCKED; a lapsed lease makes the row due again, so a crashed sender loses
-- nothing and the repeat carries the same delivery id (the webhook-id).
CREATE SCHEMA IF NOT EXISTS notifications;

CREATE TABLE notifications.deliveries (
  delivery_id      uuid PRIMARY KEY,
  workspace_id     text NOT NULL,
  idempotency_key  text NOT NULL UNIQUE,
  trigger          text NOT NULL,
  route            jsonb NOT NULL,
  message          jsonb NOT NULL,
  run_id           text,
  deployment_id    text,
  attention_id     text,
  source_event_id  text NOT NULL,
  -- Messages of one run to one route go out in order (a progress message is edited in place).
  thread_key       text,
  state            text NOT NULL CHECK (state IN ('pending', 'delivered', 'dead')),
  attempts         integer NOT NULL DEFAULT 0,
  attempt_log      jsonb NOT NULL DEFAULT '[]'::jsonb,
  backoff_ms       jsonb NOT NULL DEFAULT '[]'::jsonb,
  next_attempt_at  timestamptz,
  lease_owner      text,
  lease_until      timestamptz,
  expires_at       timestamptz NOT NULL,
  delivered_at     timestamptz,
  last_error       jsonb,
  stream_version   integer NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX deliveries_due ON notifications.deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX deliveries_thread ON notifications.deliveries (thread_key, created_at) WHERE state = 'pending';
CREATE INDEX deliveries_by_workspace ON notifications.deliveries (workspace_id, delivery_id);
CREATE INDEX deliveries_by_state ON notifications.deliveries (workspace_id, state, delivery_id);

-- Remote controls offered by a delivery. The link is `<callback id>.<HMAC>`, derived when the
-- message is sent; the row is what it may do and whether it was used.
CREATE TABLE notifications.callbacks (
  callback_id     uuid PRIMARY KEY,
  workspace_id    text NOT NULL,
  delivery_id     uuid NOT NULL REFERENCES notifications.deliveries (delivery_id),
  action          text NOT NULL,
  target_kind     text NOT NULL CHECK (target_kind IN ('attention', 'run')),
  target_id       text NOT NULL,
  run_id          text,
  role            text NOT NULL,
  -- Who acts through the link: `<channel>:<recipient>` (quorum counts distinct ones).
  recipient       text NOT NULL,
  worker_name     text NOT NULL,
  deployment_id   text,
  version_digest  text,
  summary         text NOT NULL,
  expires_at      timestamptz NOT NULL,
  used_at         timestamptz,
  outcome         text
);
CREATE INDEX callbacks_by_delivery ON notifications.callbacks (delivery_id);

-- The message a route posted for a run, to edit in place (Slack `channel:ts`, PacketChat id).
CREATE TABLE notifications.threads (
  thread_key  text PRIMARY KEY,
  ref         text NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP SCHEMA IF EXISTS notifications CASCADE;
