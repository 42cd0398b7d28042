import type { PoolClient } from 'pg';
import type { ActorRef } from '@packetagent/contracts';
import type { EncryptedRecord } from '../crypto/envelope-cipher';
import type { ConnectionFacts } from './connection';

export interface FlowRow {
  state_hash: string;
  workspace_id: string;
  credential: string;
  ciphertext: Buffer;
  iv: Buffer;
  tag: Buffer;
  wrapped_key: Buffer;
  key_id: string;
  resource: string;
  issuer: string;
  redirect_uri: string;
  return_to: string | null;
  actor: ActorRef;
  expires_at: Date;
}

export interface ConnectionRow {
  name: string;
  version: number;
  kind: 'secret' | 'oauth';
  oauth: ConnectionFacts | null;
  refresh_error: string | null;
}

export async function insertFlow(client: Pick<PoolClient, 'query'>, flow: Omit<FlowRow, 'ciphertext' | 'iv' | 'tag' | 'wrapped_key' | 'key_id'>, sealed: EncryptedRecord): Promise<void> {
  await client.query(
    `INSERT INTO vault.oauth_flows (state_hash, workspace_id, credential, ciphertext, iv, tag, wrapped_key, key_id, resource, issuer, redirect_uri, return_to, actor, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb, $14)`,
    [
      flow.state_hash, flow.workspace_id, flow.credential, sealed.ciphertext, sealed.iv, sealed.tag, sealed.wrappedKey, sealed.keyId,
      flow.resource, flow.issuer, flow.redirect_uri, flow.return_to, JSON.stringify(flow.actor), flow.expires_at,
    ],
  );
}

/** Takes the flow out: a state is redeemed at most once, whatever happens next. Expired ones go with it. */
export async function takeFlow(client: Pick<PoolClient, 'query'>, stateHash: string): Promise<FlowRow | null> {
  await client.query('DELETE FROM vault.oauth_flows WHERE expires_at < now() - interval \'1 hour\'');
  const { rows } = await client.query<FlowRow>('DELETE FROM vault.oauth_flows WHERE state_hash = $1 RETURNING *', [stateHash]);
  return rows[0] ?? null;
}

export async function markConnectionFacts(client: Pick<PoolClient, 'query'>, binding: { workspaceId: string; name: string; version: number }, facts: ConnectionFacts): Promise<void> {
  await client.query(`UPDATE vault.credentials SET kind = 'oauth', oauth = $4::jsonb WHERE workspace_id = $1 AND name = $2 AND version = $3`, [
    binding.workspaceId, binding.name, binding.version, JSON.stringify(facts),
  ]);
}

/** Remembers that the authorization server refused a refresh, so no token is handed out until someone connects again. */
export async function markRefreshRefused(client: Pick<PoolClient, 'query'>, binding: { workspaceId: string; name: string; version: number }, reason: string): Promise<void> {
  await client.query(`UPDATE vault.credentials SET refresh_failed_at = now(), refresh_error = $4 WHERE workspace_id = $1 AND name = $2 AND version = $3`, [
    binding.workspaceId, binding.name, binding.version, reason.slice(0, 1_000),
  ]);
}

export async function readConnectionRows(client: Pick<PoolClient, 'query'>, workspaceId: string): Promise<ConnectionRow[]> {
  const { rows } = await client.query<ConnectionRow>(
    `SELECT name, version, kind, oauth, refresh_error FROM vault.credentials
      WHERE workspace_id = $1 AND deleted_at IS NULL AND kind = 'oauth' ORDER BY name`,
    [workspaceId],
  );
  return rows;
}
