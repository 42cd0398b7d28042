-- Up Migration

-- OAuth connections to MCP servers, held by the vault as credentials of kind 'oauth': the
-- encrypted value holds the tokens and what a refresh needs; `oauth` holds the facts that are not
-- secret (resource, issuer, client id, scope, expiry, who connected), for listing without decrypting.
ALTER TABLE vault.credentials ADD COLUMN kind text NOT NULL DEFAULT 'secret' CHECK (kind IN ('secret', 'oauth'));
ALTER TABLE vault.credentials ADD COLUMN oauth jsonb;
-- Set when the authorization server refused a refresh: no token is handed out until an operator
-- connects again (a new version), and the reason is shown to them.
ALTER TABLE vault.credentials ADD COLUMN refresh_failed_at timestamptz;
ALTER TABLE vault.credentials ADD COLUMN refresh_error text;
ALTER TABLE vault.credentials ADD CONSTRAINT credentials_oauth_facts CHECK ((kind = 'oauth') = (oauth IS NOT NULL) OR deleted_at IS NOT NULL);

-- Authorization flows an operator started and has not finished: single-use, ten minutes. The
-- PKCE verifier and the client's registration are encrypted like a credential value, bound to
-- the flow; the state itself is kept only as its SHA-256.
CREATE TABLE vault.oauth_flows (
  state_hash    text PRIMARY KEY,
  workspace_id  text NOT NULL,
  credential    text NOT NULL,
  ciphertext    bytea NOT NULL,
  iv            bytea NOT NULL,
  tag           bytea NOT NULL,
  wrapped_key   bytea NOT NULL,
  key_id        text NOT NULL,
  resource      text NOT NULL,
  issuer        text NOT NULL,
  redirect_uri  text NOT NULL,
  return_to     text,
  actor         jsonb NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL
);
CREATE INDEX oauth_flows_expiry ON vault.oauth_flows (expires_at);

-- Down Migration

DROP TABLE vault.oauth_flows;
ALTER TABLE vault.credentials DROP CONSTRAINT credentials_oauth_facts;
ALTER TABLE vault.credentials DROP COLUMN refresh_error;
ALTER TABLE vault.credentials DROP COLUMN refresh_failed_at;
ALTER TABLE vault.credentials DROP COLUMN oauth;
ALTER TABLE vault.credentials DROP COLUMN kind;
