import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { Test, type TestingModule } from '@nestjs/testing';
import { BusModule, type Topology } from '@packetagent/bus';
import { EventRegistry, grantSigningKeys, registerVaultEvents, signCredentialGrant, type CredentialGrant } from '@packetagent/contracts';
import { EventStoreModule } from '@packetagent/eventstore';
import { testEnv, type TestDatabase } from '@packetagent/testing';
import { VaultModule } from '../vault.module';
import type { VaultModuleOptions } from '../vault.options';

export function vaultTestRegistry(): EventRegistry {
  return registerVaultEvents(new EventRegistry());
}

export const newMasterKey = (): string => randomBytes(32).toString('base64');

/** Every line a vault instance logged, with its fields, as one searchable text. */
export class CapturedLog {
  readonly lines: string[] = [];
  readonly log: NonNullable<VaultModuleOptions['log']> = (level, message, fields) => {
    this.lines.push(`${level} ${message} ${fields ? JSON.stringify(fields) : ''}`);
  };
  text(): string {
    return this.lines.join('\n');
  }
}

export interface VaultInstance {
  app: TestingModule;
  close(): Promise<void>;
}

/** One vault replica: its own Nest context, NATS connection and pool, on the shared database and bus prefix. */
export async function startVault(
  env: { db: TestDatabase; topo: Topology; registry: EventRegistry },
  options: VaultModuleOptions,
): Promise<VaultInstance> {
  const app = await Test.createTestingModule({
    imports: [
      BusModule.forRoot({ natsUrl: testEnv.natsUrl, serviceName: 'vault-test', topology: env.topo, registry: env.registry }),
      EventStoreModule.forRoot({ databaseUrl: env.db.url, poolSize: 4, registry: env.registry }),
      VaultModule.forRoot(options),
    ],
  }).compile();
  await app.init();
  return { app, close: () => app.close() };
}

/** Stands in for policy: signs grants with the seed the vault is configured with. */
export class GrantIssuer {
  readonly seed = randomBytes(32).toString('base64url');
  private readonly keys = grantSigningKeys(this.seed);
  private issued = 0;

  grant(fields: Partial<CredentialGrant> & Pick<CredentialGrant, 'workspaceId' | 'credential'>): string {
    this.issued += 1;
    return signCredentialGrant(
      { grantId: `grant-${this.issued}-${randomBytes(4).toString('hex')}`, runId: 'run-1', tool: 'http_fetch', expiresAt: new Date(Date.now() + 60_000).toISOString(), ...fields },
      this.keys.privateKey,
    );
  }
}
