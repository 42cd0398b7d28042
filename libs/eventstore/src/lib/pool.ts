import { Pool } from 'pg';

/**
 * The app's pool. A connection can fail while idle (a server restart) or while checked out
 * between two queries of a transaction (a terminated backend): either way the next query
 * rejects and says so, so the connection's `error` event must not crash the process.
 */
export function createPool(options: { connectionString: string; max?: number }): Pool {
  const pool = new Pool({ connectionString: options.connectionString, max: options.max ?? 10 });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}
