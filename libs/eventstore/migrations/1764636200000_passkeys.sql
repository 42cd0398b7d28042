-- Up Migration

-- WebAuthn credentials (passkeys) of the gateway's users: one row per credential a user
-- registered, looked up by its credential id at sign-in. The public key is not a secret; the
-- challenge of a ceremony lives only in Redis, for minutes.
CREATE TABLE identity.passkeys (
  id                    uuid PRIMARY KEY,
  user_id               uuid NOT NULL REFERENCES identity.users (id) ON DELETE CASCADE,
  -- The authenticator's credential id, base64url as the browser sends it.
  credential_id         text NOT NULL UNIQUE CHECK (length(credential_id) BETWEEN 16 AND 1366 AND credential_id ~ '^[A-Za-z0-9_-]+$'),
  -- COSE_Key of the credential, as the attestation carried it.
  public_key            bytea NOT NULL CHECK (length(public_key) BETWEEN 16 AND 2048),
  -- The signature counter last seen; 0 for authenticators that do not count.
  counter               bigint NOT NULL CHECK (counter >= 0),
  transports            text[] NOT NULL DEFAULT '{}',
  name                  text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  -- Whether the credential is synced between devices, and whether it is backed up now.
  device_type           text NOT NULL CHECK (device_type IN ('singleDevice', 'multiDevice')),
  backed_up             boolean NOT NULL,
  created_at            timestamptz NOT NULL DEFAULT now(),
  last_used_at          timestamptz
);
CREATE INDEX passkeys_user ON identity.passkeys (user_id, created_at);

-- Sign-ins refused because the authenticator's counter did not move forward: a sign of a
-- cloned credential. Kept for the owner and operators to see; the passkey itself is kept too.
CREATE TABLE identity.passkey_counter_regressions (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  passkey_id         uuid NOT NULL REFERENCES identity.passkeys (id) ON DELETE CASCADE,
  stored_counter     bigint NOT NULL,
  presented_counter  bigint NOT NULL,
  refused_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX passkey_counter_regressions_passkey ON identity.passkey_counter_regressions (passkey_id, refused_at);

-- Down Migration

DROP TABLE identity.passkey_counter_regressions;
DROP TABLE identity.passkeys;
