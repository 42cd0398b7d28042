import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';

export const ReauthenticateCommand = z.object({
  password: z.string().min(1).max(1_024),
  code: z.string().trim().min(6).max(64).optional().describe('the current TOTP code or a recovery code; needed when the account has a second factor'),
});
export type ReauthenticateCommand = z.output<typeof ReauthenticateCommand>;
export class ReauthenticateDto extends createZodDto(ReauthenticateCommand) {}

export const ReauthenticateResult = z.object({
  authenticatedAt: z.iso.datetime().describe('when the session last proved who it is: now'),
  validForSeconds: z.number().int().describe('how long changes to sign-in methods (passkeys) are allowed from now'),
});
export class ReauthenticateResultDto extends createZodDto(ReauthenticateResult) {}
