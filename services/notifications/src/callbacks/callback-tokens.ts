import { createHmac, timingSafeEqual } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CONTEXT = 'packetagent-callback-v1:';

/**
 * Remote-control links: `<callback id>.<HMAC-SHA256 of it, base64url>`. What a link may do
 * (target, action, role, version digest, expiry, its one use) is the callback's row; the MAC
 * makes a link unforgeable without the key and is derived again on every attempt, so no
 * delivery record, event or log ever holds a usable link.
 */
export class CallbackTokens {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length < 32) throw new Error('the callback signing key must be at least 32 bytes');
    this.key = key;
  }

  sign(callbackId: string): string {
    if (!UUID.test(callbackId)) throw new Error(`not a callback id: ${callbackId}`);
    return `${callbackId}.${this.mac(callbackId).toString('base64url')}`;
  }

  /** The callback id of a link this key signed; null for anything else. */
  verify(token: string): string | null {
    const dot = token.indexOf('.');
    if (dot < 0 || token.length > 200) return null;
    const callbackId = token.slice(0, dot);
    if (!UUID.test(callbackId)) return null;
    const given = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = this.mac(callbackId);
    return given.length === expected.length && timingSafeEqual(given, expected) ? callbackId : null;
  }

  private mac(callbackId: string): Buffer {
    return createHmac('sha256', this.key).update(CONTEXT).update(callbackId).digest();
  }
}
