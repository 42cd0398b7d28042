import { z } from 'zod';

export const PASSWORD_MIN_LENGTH = 12;
/** Bounds the work one request can ask of the hash function. */
export const PASSWORD_MAX_LENGTH = 1_024;

export const PasswordSchema = z
  .string()
  .min(PASSWORD_MIN_LENGTH, `must be at least ${PASSWORD_MIN_LENGTH} characters`)
  .max(PASSWORD_MAX_LENGTH, `must be at most ${PASSWORD_MAX_LENGTH} characters`);

/** E-mail addresses are compared and stored lower-case. */
export const EmailSchema = z.string().trim().toLowerCase().pipe(z.email('must be an e-mail address').max(320));

export const WorkspaceNameSchema = z.string().trim().min(1, 'must not be empty').max(200);
