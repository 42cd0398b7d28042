import { Inject, Injectable } from '@nestjs/common';
import type { z } from 'zod';
import type { CredentialMetadata, VaultCommands } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { encryptValue } from '../../../crypto/envelope-cipher';
import { MASTER_KEY_RING, type MasterKeyRing } from '../../../keys/master-key-ring';
import { retryOnConflict } from '../../../shared/retry';
import { VAULT_OPTIONS, type ResolvedVaultOptions } from '../../../vault.options';
import { decide } from '../../credential.decider';
import { appendCredentialEvents, insertVersion, loadCredential, lockCredential, retireLiveVersion } from '../../credential.rows';

export type PutCredentialRequest = z.output<typeof VaultCommands.putCredential.request>;

/** Stores a new version of a credential, encrypted under a fresh data key; the previous version is erased. */
@Injectable()
export class PutCredential {
  constructor(
    private readonly store: PostgresEventStore,
    @Inject(MASTER_KEY_RING) private readonly ring: MasterKeyRing,
    @Inject(VAULT_OPTIONS) private readonly options: ResolvedVaultOptions,
  ) {}

  async execute(request: PutCredentialRequest): Promise<CredentialMetadata> {
    const { workspaceId, name, actor } = request;
    const metadata = await retryOnConflict(() =>
      this.store.transaction(async (client) => {
        await lockCredential(client, workspaceId, name);
        const events = decide({ kind: 'store', keyId: this.ring.current.id }, await loadCredential(client, workspaceId, name));
        const { version, keyId } = events[0]!.data as { version: number; keyId: string };
        const plain = Buffer.from(request.value, 'utf8');
        const record = (() => {
          try {
            return encryptValue(plain, { workspaceId, name, version }, this.ring);
          } finally {
            plain.fill(0);
          }
        })();
        await retireLiveVersion(client, workspaceId, name);
        const createdAt = await insertVersion(client, { workspaceId, name, version }, record, actor);
        await appendCredentialEvents(this.store, client, workspaceId, name, events, actor);
        return { name, version, keyId, createdBy: actor, createdAt: createdAt.toISOString() };
      }),
    );
    this.options.log('info', 'credential stored', { workspaceId, name, version: metadata.version, keyId: metadata.keyId });
    return metadata;
  }
}
