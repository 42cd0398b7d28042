import { Inject, Injectable } from '@nestjs/common';
import { CommandBus } from '@packetagent/bus';
import { openSealedCredential, PolicyCommands, recipientKeyPair, VaultCommands } from '@packetagent/contracts';
import { NOTIFICATIONS_OPTIONS, type ResolvedNotificationsOptions } from '../notifications.options';

/**
 * A route's credential: policy signs a single-use grant for the credential the run's pinned
 * route names, and the vault answers it sealed to a key made for this read. The value is kept
 * in this process's memory for `credentialCacheSeconds` under the definition's digest and the
 * route (never written anywhere), so a burst of notifications through one route reads the
 * vault once; with 0 every attempt reads it.
 */
@Injectable()
export class RouteCredentials {
  private readonly cache = new Map<string, { value: string; until: number }>();

  constructor(
    private readonly commands: CommandBus,
    @Inject(NOTIFICATIONS_OPTIONS) private readonly options: ResolvedNotificationsOptions,
  ) {}

  async resolve(input: { workspaceId: string; runId: string; routeIndex: number; deliveryId: string; effectiveDigest: string }, timeoutMs: number): Promise<string> {
    const key = `${input.workspaceId}:${input.effectiveDigest}:${input.routeIndex}`;
    const now = this.options.clock().getTime();
    const cached = this.cache.get(key);
    if (cached && cached.until > now) return cached.value;
    const { effectiveDigest: _digest, ...grantRequest } = input;
    const granted = await this.commands.request(PolicyCommands.routeCredentialGrant, grantRequest, { timeoutMs });
    const keys = recipientKeyPair();
    const resolved = await this.commands.request(VaultCommands.resolve, { grant: granted.token, recipientPublicKey: keys.publicKey }, { timeoutMs });
    const value = openSealedCredential(resolved.sealed, keys.privateKey);
    if (this.options.credentialCacheSeconds > 0) {
      for (const [entry, held] of this.cache) if (held.until <= now) this.cache.delete(entry);
      this.cache.set(key, { value, until: now + 1_000 * this.options.credentialCacheSeconds });
    }
    return value;
  }
}
