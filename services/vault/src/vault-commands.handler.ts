import { Injectable } from '@nestjs/common';
import { OnCommand } from '@packetagent/bus';
import { VaultCommands, type CredentialMetadata } from '@packetagent/contracts';
import { DeleteCredential, type DeleteCredentialRequest, type DeleteCredentialResult } from './credentials/usecases/delete-credential/delete-credential';
import { ListCredentials } from './credentials/usecases/list-credentials/list-credentials';
import { PutCredential, type PutCredentialRequest } from './credentials/usecases/put-credential/put-credential';
import { ResolveCredential, type ResolveCredentialRequest, type ResolveCredentialResult } from './credentials/usecases/resolve-credential/resolve-credential';
import { RotateMasterKey, type RotateMasterKeyRequest, type RotateMasterKeyResult } from './keys/usecases/rotate-master-key/rotate-master-key';

/** `vault.*` over NATS request/reply, served by every replica. */
@Injectable()
export class VaultCommandsHandler {
  constructor(
    private readonly putCredential: PutCredential,
    private readonly listCredentials: ListCredentials,
    private readonly deleteCredential: DeleteCredential,
    private readonly resolveCredential: ResolveCredential,
    private readonly rotateMasterKey: RotateMasterKey,
  ) {}

  @OnCommand(VaultCommands.putCredential)
  put(request: PutCredentialRequest): Promise<CredentialMetadata> {
    return this.putCredential.execute(request);
  }

  @OnCommand(VaultCommands.listCredentials)
  list(request: { workspaceId: string }): Promise<{ items: CredentialMetadata[] }> {
    return this.listCredentials.execute(request);
  }

  @OnCommand(VaultCommands.deleteCredential)
  delete(request: DeleteCredentialRequest): Promise<DeleteCredentialResult> {
    return this.deleteCredential.execute(request);
  }

  @OnCommand(VaultCommands.resolve)
  resolve(request: ResolveCredentialRequest): Promise<ResolveCredentialResult> {
    return this.resolveCredential.execute(request);
  }

  @OnCommand(VaultCommands.rotate)
  rotate(request: RotateMasterKeyRequest): Promise<RotateMasterKeyResult> {
    return this.rotateMasterKey.execute(request);
  }
}
