import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Senders sign `<timestamp>.<raw body>` with HMAC-SHA256 and the trigger's secret (hex digest). */
export function webhookSignature(secret: string, timestamp: string, body: Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
}

export function signatureMatches(secret: string, timestamp: string, body: Buffer, signature: string): boolean {
  const expected = Buffer.from(webhookSignature(secret, timestamp, body), 'hex');
  const given = /^[0-9a-f]{64}$/i.test(signature) ? Buffer.from(signature, 'hex') : Buffer.alloc(0);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** A delivery's identity: the same signed request replayed maps to the same key. */
export function deliveryKey(timestamp: string, signature: string): string {
  return `webhook:${createHash('sha256').update(`${timestamp}.${signature.toLowerCase()}`).digest('hex')}`;
}
