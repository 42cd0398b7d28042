import { Secret, TOTP } from 'otpauth';

const ISSUER = 'PacketAgent';
const PERIOD_SECONDS = 30;

function totpFor(secret: string, label = ''): TOTP {
  return new TOTP({ issuer: ISSUER, label, secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: PERIOD_SECONDS });
}

/** A new 160-bit TOTP seed, base32 (what authenticator apps accept). */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

export function totpUri(secret: string, accountName: string): string {
  return totpFor(secret, accountName).toString();
}

export function looksLikeTotpCode(code: string): boolean {
  return /^\d{6}$/.test(code);
}

/**
 * The time step the code belongs to (one step of clock drift either way), or null. The step
 * lets the caller refuse a second use of the same code.
 */
export function matchTotp(secret: string, code: string, now = Date.now()): number | null {
  if (!looksLikeTotpCode(code)) return null;
  const totp = totpFor(secret);
  const delta = totp.validate({ token: code, timestamp: now, window: 1 });
  return delta === null ? null : totp.counter({ timestamp: now }) + delta;
}

/** The current code of a seed (used by tests and by nothing that serves requests). */
export function currentTotp(secret: string, now = Date.now()): string {
  return totpFor(secret).generate({ timestamp: now });
}
