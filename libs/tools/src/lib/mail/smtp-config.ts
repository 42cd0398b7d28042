import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import addressparser from 'nodemailer/lib/addressparser';
import { z } from 'zod';
import { SmtpError } from './smtp-error';

const DNS_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const LINE_BREAK = /[\r\n\0]/;

/** The one address of a `Name <addr>` (or bare `addr`) header value, or null. */
export function singleMailbox(value: string): { name: string; address: string } | null {
  if (LINE_BREAK.test(value)) return null;
  const parsed = addressparser(value, { flatten: true });
  if (parsed.length !== 1) return null;
  const [mailbox] = parsed;
  return mailbox && /^[^@\s]+@[^@\s]+$/.test(mailbox.address) ? mailbox : null;
}

function isCertificate(pem: string): boolean {
  try {
    new X509Certificate(pem);
    return true;
  } catch {
    return false;
  }
}

/**
 * How to reach a mail server, as an SMTP credential's value holds it. There is no plaintext
 * mode: `tls` is TLS from the first byte (usually port 465), `starttls` upgrades the plaintext
 * session and refuses to go on when the server will not (usually port 587).
 */
export const SmtpConfigSchema = z
  .strictObject({
    host: z.string().refine((host) => DNS_NAME.test(host) || isIP(host) !== 0, 'must be a host name or an IP address'),
    port: z.number().int().min(1).max(65_535),
    security: z.enum(['starttls', 'tls']),
    user: z.string().min(1).max(320).refine((user) => !LINE_BREAK.test(user), 'must be one line').optional(),
    password: z.string().min(1).max(4096).optional(),
    from: z.string().max(998).refine((from) => singleMailbox(from) !== null, 'must be one address, as "Name <addr@example.com>" or "addr@example.com"'),
    /** PEM of the private CA the server's certificate chains to; it replaces the public roots. */
    ca: z.string().max(64 * 1024).refine(isCertificate, 'must be a PEM certificate').optional(),
  })
  .superRefine((config, ctx) => {
    if (config.password !== undefined && config.user === undefined) ctx.addIssue({ code: 'custom', path: ['user'], message: 'required with a password' });
    if (config.user !== undefined && config.password === undefined) ctx.addIssue({ code: 'custom', path: ['password'], message: 'required with a user' });
  });

export type SmtpConfig = z.output<typeof SmtpConfigSchema>;

/** The JSON example error messages point to; it has every field, the optional ones marked. */
const SHAPE = '{"host", "port", "security": "starttls" | "tls", "user"?, "password"?, "from", "ca"?}';

/**
 * The configuration in a credential's value. Refusals name the fields at fault and never quote
 * the value: JSON.parse's own message would show a piece of it, the password perhaps.
 */
export function parseSmtpConfig(value: string, what = 'the SMTP credential'): SmtpConfig {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    throw new SmtpError('smtp_config_invalid', `${what} is not JSON; it holds ${SHAPE}`);
  }
  const parsed = SmtpConfigSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message}`);
    throw new SmtpError('smtp_config_invalid', `${what} is not a valid SMTP configuration (${issues.join('; ')}); it holds ${SHAPE}`);
  }
  return parsed.data;
}
