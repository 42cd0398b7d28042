import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { EmailSchema, PasswordSchema, WorkspaceNameSchema } from '../../../identity/schemas';

export const CompleteSetupCommand = z.object({
  token: z.string().min(1).max(512).describe('the first-run token from <dataDir>/setup-token'),
  email: EmailSchema,
  password: PasswordSchema,
  workspace: WorkspaceNameSchema.describe('name of the first workspace'),
});
export type CompleteSetupCommand = z.output<typeof CompleteSetupCommand>;
export class CompleteSetupDto extends createZodDto(CompleteSetupCommand) {}

export const CompleteSetupResult = z.object({
  workspaceId: z.string(),
  apiKey: z.string().describe('the owner API key; shown this once only'),
});
export class CompleteSetupResultDto extends createZodDto(CompleteSetupResult) {}
