import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { FINGERPRINT_PATTERN, PacketAdeEventTypes, readPublisherKey, type TrustedKey } from '@packetagent/contracts';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import type { WorkspacePrincipal } from '../../access/principal';
import { NotFoundError } from '../../identity/errors';
import { appendAudit, lockWorkspace } from '../../identity/persistence';
import type { AcknowledgePackageCommand, PublisherList, TrustPublisherCommand } from './trust.dto';

/**
 * The workspace's decisions about who may sign the packages it deploys: trusted publisher keys,
 * and one-off acknowledgements of a package digest signed by a key it does not trust.
 */
@Injectable()
export class PackageTrust {
  constructor(
    private readonly store: PostgresEventStore,
    @Inject(PG_POOL) private readonly pool: Pool,
  ) {}

  async trust(principal: WorkspacePrincipal, command: TrustPublisherCommand): Promise<{ fingerprint: string; name: string; createdAt: string }> {
    const workspaceId = principal.workspaceId;
    const { fingerprint, spki } = readPublisherKey(command.publicKey, 'publicKey');
    return this.store.transaction(async (client) => {
      if (!(await lockWorkspace(client, workspaceId))) throw new NotFoundError('no such workspace');
      const { rows } = await client.query<{ created_at: Date }>(
        `INSERT INTO identity.packetade_publishers (workspace_id, fingerprint, name, public_key, created_by)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (workspace_id, fingerprint) DO UPDATE SET name = EXCLUDED.name
         RETURNING created_at`,
        [workspaceId, fingerprint, command.name, spki, `${principal.kind}:${principal.id}`],
      );
      await appendAudit(this.store, client, workspaceId, principal.actor, [
        { type: PacketAdeEventTypes.publisherTrusted, data: { workspaceId, fingerprint, name: command.name } },
      ]);
      return { fingerprint, name: command.name, createdAt: rows[0]!.created_at.toISOString() };
    });
  }

  async list(workspaceId: string): Promise<PublisherList> {
    const { rows } = await this.pool.query<{ fingerprint: string; name: string; created_at: Date }>(
      `SELECT fingerprint, name, created_at FROM identity.packetade_publishers WHERE workspace_id = $1 ORDER BY created_at, fingerprint`,
      [workspaceId],
    );
    return { items: rows.map((row) => ({ fingerprint: row.fingerprint, name: row.name, createdAt: row.created_at.toISOString() })) };
  }

  async remove(principal: WorkspacePrincipal, fingerprint: string): Promise<void> {
    const workspaceId = principal.workspaceId;
    if (!FINGERPRINT_PATTERN.test(fingerprint)) throw new NotFoundError('no such trusted publisher in this workspace');
    await this.store.transaction(async (client) => {
      if (!(await lockWorkspace(client, workspaceId))) throw new NotFoundError('no such workspace');
      const removed = await client.query(`DELETE FROM identity.packetade_publishers WHERE workspace_id = $1 AND fingerprint = $2`, [workspaceId, fingerprint]);
      if (removed.rowCount === 0) throw new NotFoundError('no such trusted publisher in this workspace');
      await appendAudit(this.store, client, workspaceId, principal.actor, [{ type: PacketAdeEventTypes.publisherRemoved, data: { workspaceId, fingerprint } }]);
    });
  }

  /** Idempotent: acknowledging the same digest and key again changes nothing. */
  async acknowledge(principal: WorkspacePrincipal, command: AcknowledgePackageCommand): Promise<void> {
    const workspaceId = principal.workspaceId;
    await this.store.transaction(async (client) => {
      if (!(await lockWorkspace(client, workspaceId))) throw new NotFoundError('no such workspace');
      const inserted = await client.query(
        `INSERT INTO identity.packetade_acknowledgements (workspace_id, package_digest, key_id, note, created_by)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
        [workspaceId, command.packageDigest, command.keyId, command.note ?? null, `${principal.kind}:${principal.id}`],
      );
      if (inserted.rowCount === 0) return;
      await appendAudit(this.store, client, workspaceId, principal.actor, [
        { type: PacketAdeEventTypes.packageAcknowledged, data: { workspaceId, packageDigest: command.packageDigest, keyId: command.keyId, note: command.note ?? null } },
      ]);
    });
  }

  async trustedKeys(workspaceId: string): Promise<TrustedKey[]> {
    const { rows } = await this.pool.query<{ fingerprint: string; public_key: Buffer }>(
      `SELECT fingerprint, public_key FROM identity.packetade_publishers WHERE workspace_id = $1`,
      [workspaceId],
    );
    return rows.map((row) => ({ fingerprint: row.fingerprint, publicKey: spkiPem(row.public_key) }));
  }

  /** The key ids among `keyIds` an admin acknowledged for this package digest. */
  async acknowledgedKeys(workspaceId: string, packageDigest: string, keyIds: readonly string[]): Promise<Set<string>> {
    if (keyIds.length === 0) return new Set();
    const { rows } = await this.pool.query<{ key_id: string }>(
      `SELECT key_id FROM identity.packetade_acknowledgements WHERE workspace_id = $1 AND package_digest = $2 AND key_id = ANY($3::text[])`,
      [workspaceId, packageDigest, keyIds],
    );
    return new Set(rows.map((row) => row.key_id));
  }
}

function spkiPem(der: Buffer): string {
  const body = der.toString('base64').replace(/(.{64})/g, '$1\n').trimEnd();
  return `-----BEGIN PUBLIC KEY-----\n${body}\n-----END PUBLIC KEY-----\n`;
}
