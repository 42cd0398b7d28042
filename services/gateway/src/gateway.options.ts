import { z } from 'zod';

export interface GatewayOptions {
  /** redis://… for sessions, login throttling and TOTP replay protection. */
  redisUrl: string;
  /** Directory of the first-run setup token file (`<dataDir>/setup-token`). */
  dataDir: string;
  /** A setup token chosen by the operator; without one a random token is written to the file. */
  setupToken?: string;
  /** Send the session cookie with `Secure` (default true; false only for plain-http development). */
  cookieSecure?: boolean;
  /** Session lifetime in seconds (default 43200, 12 hours). */
  sessionTtlSeconds?: number;
  /** The externally visible base URL, listed as the server in the OpenAPI document. */
  publicUrl?: string;
  /** Prefix of every Redis key the gateway writes (default `pa:gw:`); tests use one per file. */
  redisKeyPrefix?: string;
  loginThrottle?: {
    /** Failed logins per e-mail address within the window before 429 (default 5). */
    maxFailuresPerEmail?: number;
    /** Failed logins per client address within the window before 429 (default 50). */
    maxFailuresPerIp?: number;
    /** Failed second-factor codes per user within the window before 429 (default 5). */
    maxFailuresPerUserTotp?: number;
    /** Window and lock-out length, in seconds (default 900). */
    windowSeconds?: number;
  };
}

const OptionsSchema = z.object({
  redisUrl: z.string().min(1),
  dataDir: z.string().min(1),
  setupToken: z.string().min(16, 'a setup token needs at least 16 characters').optional(),
  cookieSecure: z.boolean().default(true),
  sessionTtlSeconds: z.number().int().min(60).default(43_200),
  publicUrl: z.url().optional(),
  redisKeyPrefix: z.string().regex(/^[A-Za-z0-9:_-]{1,64}$/).default('pa:gw:'),
  loginThrottle: z
    .object({
      maxFailuresPerEmail: z.number().int().min(1).default(5),
      maxFailuresPerIp: z.number().int().min(1).default(50),
      maxFailuresPerUserTotp: z.number().int().min(1).default(5),
      windowSeconds: z.number().int().min(1).default(900),
    })
    .prefault({}),
});

export type ResolvedGatewayOptions = z.output<typeof OptionsSchema>;

export const GATEWAY_OPTIONS = Symbol('GATEWAY_OPTIONS');

/** Fills defaults and refuses nonsense at boot rather than at the first request. */
export function resolveGatewayOptions(options: GatewayOptions): ResolvedGatewayOptions {
  const result = OptionsSchema.safeParse(options);
  if (!result.success) {
    throw new Error(`invalid gateway options: ${result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  return result.data;
}
