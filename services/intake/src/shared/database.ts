import { validate as isUuid } from 'uuid';
import { ValidationError } from '@packetagent/contracts';

/**
 * An opaque keyset cursor. Ids are UUIDv7, so ordering by id is ordering by creation, total,
 * and stable while rows are inserted.
 */
export function encodeCursor(id: string): string {
  return Buffer.from(`v1:${id}`).toString('base64url');
}

/** The id a cursor carries; a cursor this API did not issue is refused before it reaches a query. */
export function decodeCursor(cursor: string | null): string | null {
  if (!cursor) return null;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const id = text.slice(3);
  if (!text.startsWith('v1:') || !isUuid(id)) throw new InvalidCursorError();
  return id;
}

export class InvalidCursorError extends ValidationError {
  constructor() {
    super('invalid cursor', [{ path: 'cursor', message: 'not a cursor this API issued' }]);
  }
}
