import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { EmailSchema } from '../../../identity/schemas';

// No length rule on the password here: a login only compares, and must not hint at the policy.
export const LoginCommand = z.object({ email: EmailSchema, password: z.string().min(1).max(1_024) });
export type LoginCommand = z.output<typeof LoginCommand>;
export class LoginDto extends createZodDto(LoginCommand) {}

export const LoginResult = z.object({
  csrfToken: z.string().describe('send as x-csrf-token with every POST/PUT/PATCH/DELETE made with the session cookie'),
  totpRequired: z.boolean().describe('true: the session is pending until POST /api/v1/auth/totp'),
});
export class LoginResultDto extends createZodDto(LoginResult) {}
