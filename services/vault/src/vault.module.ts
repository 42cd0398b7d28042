import { Module, type DynamicModule } from '@nestjs/common';
import { EVENT_REGISTRY } from '@packetagent/bus';
import { registerVaultEvents, type EventRegistry } from '@packetagent/contracts';
import { DeleteCredential } from './credentials/usecases/delete-credential/delete-credential';
import { ListCredentials } from './credentials/usecases/list-credentials/list-credentials';
import { PutCredential } from './credentials/usecases/put-credential/put-credential';
import { ResolveCredential } from './credentials/usecases/resolve-credential/resolve-credential';
import { GRANT_VERIFY_KEY, loadGrantVerifyKey } from './keys/grant-verify-key';
import { KeyUsageCheck } from './keys/key-usage-check';
import { loadMasterKeyRing, MASTER_KEY_RING } from './keys/master-key-ring';
import { RotateMasterKey } from './keys/usecases/rotate-master-key/rotate-master-key';
import { ConnectionTokens } from './oauth/connection-tokens';
import { OAuthCommandsHandler } from './oauth/oauth-commands.handler';
import { BeginConnection } from './oauth/usecases/begin-connection';
import { CompleteConnection } from './oauth/usecases/complete-connection';
import { IssueListingToken } from './oauth/usecases/issue-listing-token';
import { ListConnections } from './oauth/usecases/list-connections';
import { VaultCommandsHandler } from './vault-commands.handler';
import { resolveVaultOptions, VAULT_OPTIONS, type VaultModuleOptions } from './vault.options';

const VAULT_EVENT_SCHEMAS = Symbol('VAULT_EVENT_SCHEMAS');

/**
 * Envelope-encrypted credentials. Needs the global providers of BusModule (CommandBus, event
 * registry) and EventStoreModule (PG_POOL, PostgresEventStore). The master keys are loaded
 * while the module is built, so a missing or weak key in production stops the app from starting.
 */
@Module({})
export class VaultModule {
  static forRoot(options: VaultModuleOptions): DynamicModule {
    const resolved = resolveVaultOptions(options);
    // Loaded here, before any provider connects to anything: a missing or weak key in
    // production stops the app with nothing left open.
    const ring = loadMasterKeyRing(options, resolved.log);
    const grantVerifyKey = loadGrantVerifyKey(options, resolved.log);
    return {
      module: VaultModule,
      providers: [
        { provide: VAULT_OPTIONS, useValue: resolved },
        { provide: MASTER_KEY_RING, useValue: ring },
        { provide: GRANT_VERIFY_KEY, useValue: grantVerifyKey },
        {
          provide: VAULT_EVENT_SCHEMAS,
          useFactory: (registry: EventRegistry) => registerVaultEvents(registry),
          inject: [EVENT_REGISTRY],
        },
        PutCredential,
        ListCredentials,
        DeleteCredential,
        ResolveCredential,
        RotateMasterKey,
        VaultCommandsHandler,
        KeyUsageCheck,
        ConnectionTokens,
        BeginConnection,
        CompleteConnection,
        ListConnections,
        IssueListingToken,
        OAuthCommandsHandler,
      ],
    };
  }
}
