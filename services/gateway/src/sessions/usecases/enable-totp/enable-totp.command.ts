import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';

export const EnableTotpCommand = z.object({ code: z.string().trim().regex(/^\d{6}$/, 'must be the six-digit code from the authenticator') });
export type EnableTotpCommand = z.output<typeof EnableTotpCommand>;
export class EnableTotpDto extends createZodDto(EnableTotpCommand) {}

export const EnableTotpResult = z.object({
  recoveryCodes: z.array(z.string()).describe('single-use codes for when the authenticator is lost; shown this once'),
});
export class EnableTotpResultDto extends createZodDto(EnableTotpResult) {}
