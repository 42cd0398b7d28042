import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { CredentialValueSchema, VaultCommands } from '@packetagent/contracts';

export const PutCredentialBody = z.strictObject({ value: CredentialValueSchema });
export class PutCredentialDto extends createZodDto(PutCredentialBody) {}

/** A credential's metadata: its value never comes back. */
export class CredentialMetadataDto extends createZodDto(VaultCommands.putCredential.response) {}
export class CredentialListDto extends createZodDto(VaultCommands.listCredentials.response) {}
