import { CommandBus } from '@packetagent/bus';
import { openSealedCredential, PolicyCommands, recipientKeyPair, VaultCommands } from '@packetagent/contracts';

/**
 * A computer's private key comes from the vault through a single-use grant only policy signs:
 * for a run's command the grant came with policy's allow, for a probe it is asked for here (policy
 * reads the record itself, so only a key registered as this computer's can be granted). The
 * value is sealed to a key made for this one read and never kept beyond the connection.
 */
export class ComputerKeys {
  constructor(private readonly commands: CommandBus) {}

  async redeem(grant: string): Promise<{ credential: string; value: string }> {
    const keys = recipientKeyPair();
    const resolved = await this.commands.request(VaultCommands.resolve, { grant, recipientPublicKey: keys.publicKey });
    return { credential: resolved.name, value: openSealedCredential(resolved.sealed, keys.privateKey) };
  }

  async forProbe(workspaceId: string, computer: string, purpose: 'probe' | 'reclaim' | 'mcp_list' = 'probe'): Promise<string> {
    const granted = await this.commands.request(PolicyCommands.computerKeyGrant, { workspaceId, computer, purpose });
    return (await this.redeem(granted.token)).value;
  }
}
