import { randomBytes } from 'node:crypto';
import type { PoolClient } from 'pg';
import { workspaceStream, type Actor } from '@packetagent/contracts';
import type { ExpectedVersion, PostgresEventStore } from '@packetagent/eventstore';

export interface AuditEvent {
  type: string;
  data: unknown;
}

/**
 * Appends identity audit events to `workspace-<id>` inside the caller's transaction. Writers
 * to an existing workspace stream lock the workspace row first (`lockWorkspace`), so
 * concurrent changes queue instead of failing on the stream version.
 */
export async function appendAudit(
  store: PostgresEventStore,
  client: PoolClient,
  workspaceId: string,
  actor: Actor,
  events: AuditEvent[],
  expectedVersion: ExpectedVersion = 'any',
): Promise<void> {
  await store.append(workspaceStream(workspaceId), expectedVersion, events.map((event) => ({ ...event, actor })), { workspaceId, client });
}

/**
 * Appends an audit event about a user (their second factor, their passkeys) to the stream of
 * every workspace they belong to, so each workspace's audit shows it. Workspaces are locked in
 * id order, so two such transactions cannot deadlock.
 */
export async function appendUserAudit(store: PostgresEventStore, client: PoolClient, userId: string, actor: Actor, events: AuditEvent[]): Promise<void> {
  const memberships = await client.query<{ workspace_id: string }>(`SELECT workspace_id FROM identity.memberships WHERE user_id = $1 ORDER BY workspace_id`, [userId]);
  for (const { workspace_id: workspaceId } of memberships.rows) {
    await lockWorkspace(client, workspaceId);
    await appendAudit(store, client, workspaceId, actor, events);
  }
}

/** Locks the workspace row for the rest of the transaction; false when there is no such workspace. */
export async function lockWorkspace(client: PoolClient, workspaceId: string): Promise<boolean> {
  const { rowCount } = await client.query(`SELECT 1 FROM identity.workspaces WHERE id = $1 FOR UPDATE`, [workspaceId]);
  return rowCount === 1;
}

/** `ws_` and 20 hex characters: NATS-subject safe and matching the workspace id grammar. */
export function newWorkspaceId(): string {
  return `ws_${randomBytes(10).toString('hex')}`;
}
