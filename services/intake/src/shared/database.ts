import { ValidationError } from '@packetagent/contracts';

/**
 * An opaque keyset cursor. Ids are UUIDv7, so ordering by id is ordering by creation, total,
 * and stable while rows are inserted.
 */
export function encodeCursor(id: string): string {
  return Buffer.from(`v1:${id}`).toString('base64url');
}

export function decodeCursor(cursor: string | null): string | null {
  if (!cursor) return null;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith('v1:') || text.length < 4 || text.length > 210) throw new InvalidCursorError();
  return text.slice(3);
}

export class InvalidCursorError extends ValidationError {
  constructor() {
    super('invalid cursor', [{ path: 'cursor', message: 'not a cursor this API issued' }]);
  }
}
