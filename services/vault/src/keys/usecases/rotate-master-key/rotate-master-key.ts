import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { z } from 'zod';
import { vaultStream, type VaultCommands } from '@packetagent/contracts';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import { rewrapDataKey } from '../../../crypto/envelope-cipher';
import { retryOnConflict } from '../../../shared/retry';
import { VAULT_OPTIONS, type ResolvedVaultOptions } from '../../../vault.options';
import { MASTER_KEY_RING, type MasterKeyRing } from '../../master-key-ring';

export type RotateMasterKeyRequest = z.output<typeof VaultCommands.rotate.request>;
export type RotateMasterKeyResult = z.input<typeof VaultCommands.rotate.response>;

interface WrappedRow {
  workspace_id: string;
  name: string;
  version: number;
  wrapped_key: Buffer;
  key_id: string;
}

/**
 * Moves every live data key onto the current master key, a batch per transaction. Rows being
 * re-wrapped are skipped by a concurrent rotation (SKIP LOCKED), so replicas share the work;
 * readers see either wrapping, and both keys are in the ring, so nothing stops meanwhile.
 */
@Injectable()
export class RotateMasterKey {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly store: PostgresEventStore,
    @Inject(MASTER_KEY_RING) private readonly ring: MasterKeyRing,
    @Inject(VAULT_OPTIONS) private readonly options: ResolvedVaultOptions,
  ) {}

  async execute(request: RotateMasterKeyRequest): Promise<RotateMasterKeyResult> {
    const toKeyId = this.ring.current.id;
    const oldKeyIds = this.ring.ids().slice(1);
    const totals = new Map<string, number>();
    for (;;) {
      const batch = await retryOnConflict(() => this.rewrapBatch(oldKeyIds, request.actor));
      for (const [fromKeyId, count] of batch) totals.set(fromKeyId, (totals.get(fromKeyId) ?? 0) + count);
      if (batch.size === 0) break;
    }
    const { rows } = await this.pool.query<{ n: string }>(`SELECT count(*) AS n FROM vault.credentials WHERE deleted_at IS NULL AND key_id <> $1`, [toKeyId]);
    const remaining = Number(rows[0]!.n);
    const rewrapped = [...totals].map(([fromKeyId, count]) => ({ fromKeyId, count }));
    this.options.log(remaining ? 'warn' : 'info', 'master key rotation finished', { toKeyId, rewrapped, remaining });
    return { toKeyId, rewrapped, remaining };
  }

  /** One batch in one transaction: rows re-wrapped, and a `vault.rotated` per workspace and old key. */
  private rewrapBatch(oldKeyIds: string[], actor: RotateMasterKeyRequest['actor']): Promise<Map<string, number>> {
    return this.store.transaction(async (client) => {
      const { rows } = await client.query<WrappedRow>(
        `SELECT workspace_id, name, version, wrapped_key, key_id FROM vault.credentials
          WHERE deleted_at IS NULL AND key_id = ANY($1::text[])
          ORDER BY workspace_id, name LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [oldKeyIds, this.options.rotationBatchSize],
      );
      const counts = new Map<string, Map<string, number>>();
      for (const row of rows) {
        const binding = { workspaceId: row.workspace_id, name: row.name, version: row.version };
        const next = rewrapDataKey({ wrappedKey: row.wrapped_key, keyId: row.key_id }, binding, this.ring);
        await client.query(`UPDATE vault.credentials SET wrapped_key = $4, key_id = $5 WHERE workspace_id = $1 AND name = $2 AND version = $3`, [
          row.workspace_id,
          row.name,
          row.version,
          next.wrappedKey,
          next.keyId,
        ]);
        const perKey = counts.get(row.workspace_id) ?? new Map<string, number>();
        perKey.set(row.key_id, (perKey.get(row.key_id) ?? 0) + 1);
        counts.set(row.workspace_id, perKey);
      }
      const totals = new Map<string, number>();
      for (const [workspaceId, perKey] of counts) {
        const events = [...perKey].map(([fromKeyId, count]) => ({ type: 'vault.rotated', data: { fromKeyId, toKeyId: this.ring.current.id, count }, actor }));
        await this.store.append(vaultStream(workspaceId), 'any', events, { workspaceId, client });
        for (const [fromKeyId, count] of perKey) totals.set(fromKeyId, (totals.get(fromKeyId) ?? 0) + count);
      }
      return totals;
    });
  }
}
