-- Up Migration

-- The vault's state: envelope-encrypted credential versions and redeemed grants. Ciphertext
-- and wrapped data keys live only here; events carry metadata (docs/adr/0011-vault-key-hierarchy.md).
CREATE SCHEMA vault;

-- One row per stored version of a credential. Only the live version (deleted_at IS NULL) keeps
-- its ciphertext and wrapped key: a replaced or deleted version is erased, not just hidden.
CREATE TABLE vault.credentials (
  workspace_id  text NOT NULL,
  name          text NOT NULL,
  version       integer NOT NULL CHECK (version >= 1),
  ciphertext    bytea,
  iv            bytea,
  tag           bytea,
  -- The data key under the master key: iv (12 bytes) || encrypted key (32) || tag (16).
  wrapped_key   bytea,
  key_id        text NOT NULL,
  created_by    jsonb NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  deleted_at    timestamptz,
  PRIMARY KEY (workspace_id, name, version),
  CHECK ((deleted_at IS NULL) = (ciphertext IS NOT NULL AND iv IS NOT NULL AND tag IS NOT NULL AND wrapped_key IS NOT NULL))
);
-- At most one live version per name.
CREATE UNIQUE INDEX credentials_live ON vault.credentials (workspace_id, name) WHERE deleted_at IS NULL;
-- Rotation looks for live records under a key other than the current one.
CREATE INDEX credentials_by_key ON vault.credentials (key_id) WHERE deleted_at IS NULL;

-- Redeemed credential grants: the primary key makes a grant single-use across every vault replica.
CREATE TABLE vault.used_grants (
  grant_id      text PRIMARY KEY,
  workspace_id  text NOT NULL,
  credential    text NOT NULL,
  run_id        text NOT NULL,
  -- After this a grant is refused as expired anyway, so the row may be pruned.
  expires_at    timestamptz NOT NULL,
  used_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX used_grants_expiry ON vault.used_grants (expires_at);

-- Down Migration

DROP TABLE vault.used_grants;
DROP TABLE vault.credentials;
DROP SCHEMA vault;
