import { ValidationError } from '@packetagent/contracts';
import type { Pool, PoolClient } from 'pg';

/** Runs `work` in one transaction: the state rows and the events announcing them commit together. */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

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
