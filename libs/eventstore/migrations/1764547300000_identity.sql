-- Up Migration

-- Accounts, workspaces, memberships, API keys and first-run setup: the gateway's tables. Every
-- change here is announced by an audit event appended in the same transaction.
CREATE SCHEMA identity;

CREATE TABLE identity.users (
  id             uuid PRIMARY KEY,
  email          text NOT NULL UNIQUE CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 320),
  -- argon2id, PHC string format.
  password_hash  text NOT NULL,
  -- The TOTP seed is kept in clear until the vault service can hold it encrypted; it is set at
  -- enrolment and only counts once totp_enabled is true.
  totp_secret    text,
  totp_enabled   boolean NOT NULL DEFAULT false,
  created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE identity.workspaces (
  id          text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{1,64}$'),
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE identity.memberships (
  user_id       uuid NOT NULL REFERENCES identity.users (id) ON DELETE CASCADE,
  workspace_id  text NOT NULL REFERENCES identity.workspaces (id) ON DELETE CASCADE,
  role          text NOT NULL CHECK (role IN ('viewer', 'member', 'admin', 'owner')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, workspace_id)
);
CREATE INDEX memberships_workspace ON identity.memberships (workspace_id);
-- "Is there an owner yet?" decides whether first-run setup is open.
CREATE INDEX memberships_owner ON identity.memberships (workspace_id) WHERE role = 'owner';

CREATE TABLE identity.api_keys (
  id               text PRIMARY KEY CHECK (id ~ '^[a-z0-9]{8,64}$'),
  workspace_id     text NOT NULL REFERENCES identity.workspaces (id) ON DELETE CASCADE,
  role             text NOT NULL CHECK (role IN ('viewer', 'member', 'admin', 'owner')),
  name             text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  -- SHA-256 of the high-entropy secret; a slow hash buys nothing for 256 random bits.
  secret_hash      bytea NOT NULL CHECK (length(secret_hash) = 32),
  -- What the key listing shows so a person can recognise a key; never enough to use it.
  prefix           text NOT NULL,
  expires_at       timestamptz,
  revoked_at       timestamptz,
  created_by_kind  text NOT NULL CHECK (created_by_kind IN ('user', 'api_key')),
  created_by       text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  last_used_at     timestamptz
);
CREATE INDEX api_keys_workspace ON identity.api_keys (workspace_id, created_at);

CREATE TABLE identity.recovery_codes (
  user_id    uuid NOT NULL REFERENCES identity.users (id) ON DELETE CASCADE,
  code_hash  bytea NOT NULL CHECK (length(code_hash) = 32),
  used_at    timestamptz,
  PRIMARY KEY (user_id, code_hash)
);

-- At most one row: the hash of the current first-run token, and when it was used.
CREATE TABLE identity.setup (
  singleton    boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  token_hash   bytea NOT NULL CHECK (length(token_hash) = 32),
  created_at   timestamptz NOT NULL DEFAULT now(),
  consumed_at  timestamptz
);

-- Down Migration

DROP SCHEMA identity CASCADE;
