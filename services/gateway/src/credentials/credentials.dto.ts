import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { CredentialValueSchema } from '@packetagent/contracts';

export const PutCredentialBody = z.strictObject({ value: CredentialValueSchema });
export class PutCredentialDto extends createZodDto(PutCredentialBody) {}
