-- Up Migration

-- PacketADE actor tokens: bound to one workspace, an actor name and a set of operations, with an
-- expiry. The actor (not the token) owns what it deploys, so rotating a token keeps them.
CREATE TABLE identity.actor_tokens (
  id               text PRIMARY KEY CHECK (id ~ '^[a-f0-9]{20}$'),
  workspace_id     text NOT NULL REFERENCES identity.workspaces (id) ON DELETE CASCADE,
  actor_name       text NOT NULL CHECK (actor_name ~ '^[a-z][a-z0-9-]{1,62}$'),
  operations       text[] NOT NULL CHECK (cardinality(operations) >= 1),
  -- SHA-256 of the 256-bit secret, as for API keys.
  secret_hash      bytea NOT NULL CHECK (length(secret_hash) = 32),
  prefix           text NOT NULL,
  expires_at       timestamptz NOT NULL,
  revoked_at       timestamptz,
  created_by_kind  text NOT NULL CHECK (created_by_kind IN ('user', 'api_key')),
  created_by       text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  last_used_at     timestamptz
);
CREATE INDEX actor_tokens_workspace ON identity.actor_tokens (workspace_id, created_at);

-- Keys whose signatures on a worker package the workspace trusts, by SPKI SHA-256 fingerprint.
CREATE TABLE identity.packetade_publishers (
  workspace_id  text NOT NULL REFERENCES identity.workspaces (id) ON DELETE CASCADE,
  fingerprint   text NOT NULL CHECK (fingerprint ~ '^SHA256:[0-9a-f]{64}$'),
  name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  public_key    bytea NOT NULL,
  created_by    text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, fingerprint)
);

-- An admin's explicit acceptance of one package digest signed by one key the workspace does not trust.
CREATE TABLE identity.packetade_acknowledgements (
  workspace_id    text NOT NULL REFERENCES identity.workspaces (id) ON DELETE CASCADE,
  package_digest  char(64) NOT NULL,
  key_id          text NOT NULL CHECK (key_id ~ '^SHA256:[0-9a-f]{64}$'),
  note            text,
  created_by      text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, package_digest, key_id)
);

-- The deployments an actor made, with the package digest each was last deployed from.
CREATE TABLE identity.packetade_deployments (
  deployment_id   text PRIMARY KEY,
  workspace_id    text NOT NULL REFERENCES identity.workspaces (id) ON DELETE CASCADE,
  actor_name      text NOT NULL,
  worker_id       text NOT NULL,
  package_digest  char(64) NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX packetade_deployments_actor ON identity.packetade_deployments (workspace_id, actor_name);

-- Each actor's acknowledged feed position; `revision` is its ETag and only ever grows.
CREATE TABLE identity.packetade_feed_cursors (
  workspace_id  text NOT NULL REFERENCES identity.workspaces (id) ON DELETE CASCADE,
  actor_name    text NOT NULL,
  position      bigint NOT NULL CHECK (position >= 0),
  revision      bigint NOT NULL CHECK (revision >= 0),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, actor_name)
);

-- Down Migration

DROP TABLE identity.packetade_feed_cursors;
DROP TABLE identity.packetade_deployments;
DROP TABLE identity.packetade_acknowledgements;
DROP TABLE identity.packetade_publishers;
DROP TABLE identity.actor_tokens;
