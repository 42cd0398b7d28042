import { ValidationError } from '@packetagent/contracts';

/** Opaque to clients: the stream version after which the next page starts. */
export function encodeEventCursor(streamVersion: number): string {
  return Buffer.from(`e1:${streamVersion}`).toString('base64url');
}

export function decodeEventCursor(cursor: string | undefined): number {
  if (!cursor) return 0;
  const match = /^e1:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw new ValidationError('invalid cursor', [{ path: 'after', message: 'not a cursor this API issued' }]);
  return Number(match[1]);
}
