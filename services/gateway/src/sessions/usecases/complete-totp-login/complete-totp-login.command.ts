import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';

export const CompleteTotpLoginCommand = z.object({
  code: z.string().trim().min(6).max(64).describe('the current six-digit code, or one of the recovery codes'),
});
export type CompleteTotpLoginCommand = z.output<typeof CompleteTotpLoginCommand>;
export class CompleteTotpLoginDto extends createZodDto(CompleteTotpLoginCommand) {}

export const CompleteTotpLoginResult = z.object({
  csrfToken: z.string().describe('the new session\'s CSRF token (the pending one no longer works)'),
});
export class CompleteTotpLoginResultDto extends createZodDto(CompleteTotpLoginResult) {}
