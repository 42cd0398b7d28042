import type { PoolClient } from 'pg';
import { credentialStream, type ActorRef, type CredentialMetadata } from '@packetagent/contracts';
import { ConcurrencyError, type PostgresEventStore } from '@packetagent/eventstore';
import type { EncryptedRecord } from '../crypto/envelope-cipher';
import { initialCredential, type Credential, type CredentialEvent } from './credential.decider';

export interface LiveCredentialRow {
  workspace_id: string;
  name: string;
  version: number;
  ciphertext: Buffer;
  iv: Buffer;
  tag: Buffer;
  wrapped_key: Buffer;
  key_id: string;
  created_by: ActorRef;
  created_at: Date;
  kind: 'secret' | 'oauth';
  /** For an OAuth connection: the facts that are not secret (ConnectionFacts). */
  oauth: Record<string, unknown> | null;
  /** Why the authorization server refused the last refresh, when it did. */
  refresh_error: string | null;
}

/**
 * Serialises writers of one credential (across replicas) until the transaction ends, including
 * the very first put of a name, which has no row to lock yet.
 */
export async function lockCredential(client: PoolClient, workspaceId: string, name: string): Promise<void> {
  await client.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`vault.credential:${workspaceId}:${name}`]);
}

/** The credential's state from its newest version; call after lockCredential. */
export async function loadCredential(client: PoolClient, workspaceId: string, name: string): Promise<Credential> {
  const { rows } = await client.query<{ version: number; deleted: boolean }>(
    `SELECT version, deleted_at IS NOT NULL AS deleted FROM vault.credentials
      WHERE workspace_id = $1 AND name = $2 ORDER BY version DESC LIMIT 1`,
    [workspaceId, name],
  );
  const newest = rows[0];
  if (!newest) return initialCredential(name);
  return { status: newest.deleted ? 'deleted' : 'live', name, lastVersion: newest.version };
}

export async function readLiveCredential(client: Pick<PoolClient, 'query'>, workspaceId: string, name: string): Promise<LiveCredentialRow | null> {
  const { rows } = await client.query<LiveCredentialRow>(
    `SELECT workspace_id, name, version, ciphertext, iv, tag, wrapped_key, key_id, created_by, created_at, kind, oauth, refresh_error
       FROM vault.credentials WHERE workspace_id = $1 AND name = $2 AND deleted_at IS NULL`,
    [workspaceId, name],
  );
  return rows[0] ?? null;
}

/** Ends the live version: its ciphertext and wrapped key are erased, only the metadata stays. */
export async function retireLiveVersion(client: PoolClient, workspaceId: string, name: string): Promise<Date | null> {
  const { rows } = await client.query<{ deleted_at: Date }>(
    `UPDATE vault.credentials SET deleted_at = now(), ciphertext = NULL, iv = NULL, tag = NULL, wrapped_key = NULL
      WHERE workspace_id = $1 AND name = $2 AND deleted_at IS NULL RETURNING deleted_at`,
    [workspaceId, name],
  );
  return rows[0]?.deleted_at ?? null;
}

export async function insertVersion(
  client: PoolClient,
  binding: { workspaceId: string; name: string; version: number },
  record: EncryptedRecord,
  createdBy: ActorRef,
  oauth: object | null = null,
): Promise<Date> {
  const { rows } = await client.query<{ created_at: Date }>(
    `INSERT INTO vault.credentials (workspace_id, name, version, ciphertext, iv, tag, wrapped_key, key_id, created_by, kind, oauth)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11::jsonb) RETURNING created_at`,
    [
      binding.workspaceId, binding.name, binding.version, record.ciphertext, record.iv, record.tag, record.wrappedKey, record.keyId, JSON.stringify(createdBy),
      oauth ? 'oauth' : 'secret', oauth ? JSON.stringify(oauth) : null,
    ],
  );
  return rows[0]!.created_at;
}

/**
 * Appends the decided events to the credential's stream inside the caller's transaction.
 * `keepTransaction`: a transaction that has done something outside the database (refreshed
 * OAuth tokens, which may rotate the refresh token) must not be rolled back because this
 * process's cached stream head was stale; the append is repeated from a savepoint instead,
 * with the head read afresh (the credential's lock keeps other writers out meanwhile).
 */
export async function appendCredentialEvents(
  store: PostgresEventStore,
  client: PoolClient,
  workspaceId: string,
  name: string,
  events: CredentialEvent[],
  actor: ActorRef,
  options: { keepTransaction?: boolean } = {},
): Promise<void> {
  const append = () => store.append(credentialStream(workspaceId, name), 'any', events.map((event) => ({ type: event.type, data: event.data, actor })), { workspaceId, client });
  if (!options.keepTransaction) {
    await append();
    return;
  }
  for (let attempt = 1; ; attempt++) {
    await client.query('SAVEPOINT credential_append');
    try {
      await append();
      await client.query('RELEASE SAVEPOINT credential_append');
      return;
    } catch (error) {
      await client.query('ROLLBACK TO SAVEPOINT credential_append');
      if (!(error instanceof ConcurrencyError) || attempt >= STALE_HEAD_ATTEMPTS) throw error;
    }
  }
}

const STALE_HEAD_ATTEMPTS = 3;

export function toMetadata(row: Pick<LiveCredentialRow, 'name' | 'version' | 'key_id' | 'created_by' | 'created_at'>): CredentialMetadata {
  return { name: row.name, version: row.version, keyId: row.key_id, createdBy: row.created_by, createdAt: row.created_at.toISOString() };
}
