import { Inject, Injectable } from '@nestjs/common';
import type { z } from 'zod';
import type { VaultCommands } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { retryOnConflict } from '../../../shared/retry';
import { VAULT_OPTIONS, type ResolvedVaultOptions } from '../../../vault.options';
import { decide } from '../../credential.decider';
import { appendCredentialEvents, loadCredential, lockCredential, retireLiveVersion } from '../../credential.rows';

export type DeleteCredentialRequest = z.output<typeof VaultCommands.deleteCredential.request>;
export type DeleteCredentialResult = z.input<typeof VaultCommands.deleteCredential.response>;

/** Erases the live version's ciphertext and wrapped key; grants for the name are refused from then on. */
@Injectable()
export class DeleteCredential {
  constructor(
    private readonly store: PostgresEventStore,
    @Inject(VAULT_OPTIONS) private readonly options: ResolvedVaultOptions,
  ) {}

  async execute(request: DeleteCredentialRequest): Promise<DeleteCredentialResult> {
    const { workspaceId, name, actor } = request;
    const result = await retryOnConflict(() =>
      this.store.transaction(async (client) => {
        await lockCredential(client, workspaceId, name);
        const events = decide({ kind: 'delete' }, await loadCredential(client, workspaceId, name));
        const deletedAt = (await retireLiveVersion(client, workspaceId, name))!;
        await appendCredentialEvents(this.store, client, workspaceId, name, events, actor);
        return { name, version: events[0]!.data.version, deletedAt: deletedAt.toISOString() };
      }),
    );
    this.options.log('info', 'credential deleted', { workspaceId, name, version: result.version });
    return result;
  }
}
