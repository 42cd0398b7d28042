import type { Pool, PoolClient } from 'pg';

/** Runs `work` in one transaction on `client`: the state rows and the events announcing them commit together. */
export async function inTransactionOn<T>(client: PoolClient, work: (client: PoolClient) => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * Tells the active leader, in whichever replica, that schedules or timers changed so it looks
 * again now rather than at its next wake-up. Best effort: the leader never sleeps long anyway.
 */
export async function signalChange(pool: Pool, channel: string): Promise<void> {
  await pool.query('SELECT pg_notify($1, $2)', [channel, '']).catch(() => undefined);
}
