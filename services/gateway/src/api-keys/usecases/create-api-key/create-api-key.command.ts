import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { RoleSchema } from '@packetagent/contracts';

export const CreateApiKeyCommand = z.object({
  name: z.string().trim().min(1, 'must not be empty').max(200),
  role: RoleSchema.describe('at most the creator\'s own role'),
  expiresAt: z.iso
    .datetime({ offset: true })
    .refine((value) => Date.parse(value) > Date.now(), 'must be in the future')
    .optional()
    .describe('when the key stops working; never when absent'),
});
export type CreateApiKeyCommand = z.output<typeof CreateApiKeyCommand>;
export class CreateApiKeyDto extends createZodDto(CreateApiKeyCommand) {}

export const CreatedApiKey = z.object({
  id: z.string(),
  secret: z.string().describe('the whole key, "pa_<id>_<secret>"; shown this once only'),
  name: z.string(),
  role: RoleSchema,
  expiresAt: z.iso.datetime().nullable(),
});
export type CreatedApiKey = z.output<typeof CreatedApiKey>;
export class CreatedApiKeyDto extends createZodDto(CreatedApiKey) {}
