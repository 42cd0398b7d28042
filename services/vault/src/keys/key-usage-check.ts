import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '@packetagent/eventstore';
import { VAULT_OPTIONS, type ResolvedVaultOptions } from '../vault.options';
import { MASTER_KEY_RING, type MasterKeyRing } from './master-key-ring';

/**
 * Says at start when live credentials are wrapped under a key this replica was not given (an
 * old key dropped before `vault.rotate` finished, or a replica started with the wrong key):
 * those credentials cannot be resolved here.
 */
@Injectable()
export class KeyUsageCheck implements OnApplicationBootstrap {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(MASTER_KEY_RING) private readonly ring: MasterKeyRing,
    @Inject(VAULT_OPTIONS) private readonly options: ResolvedVaultOptions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { rows } = await this.pool.query<{ key_id: string; n: string }>(
      `SELECT key_id, count(*) AS n FROM vault.credentials WHERE deleted_at IS NULL AND NOT (key_id = ANY($1::text[])) GROUP BY key_id`,
      [this.ring.ids()],
    );
    for (const row of rows) {
      this.options.log('error', 'live credentials are wrapped under a master key this vault does not have', { keyId: row.key_id, count: Number(row.n) });
    }
    const current = this.ring.current.id;
    this.options.log('info', 'vault started', { mode: this.options.mode, currentKeyId: current, readableKeyIds: this.ring.ids() });
  }
}
