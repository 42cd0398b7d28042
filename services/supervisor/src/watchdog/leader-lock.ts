import type { Pool, PoolClient } from 'pg';

/** Advisory-lock namespace of the supervisor's leader roles ("PASV"); the scheduler and the relay use their own. */
const LOCK_NAMESPACE = 0x5041_5356;

interface Held {
  client: PoolClient;
  done: boolean;
}

/**
 * One leader among the replicas: a Postgres session advisory lock held on a dedicated
 * connection taken from the pool and never given back to it (it is destroyed when leadership
 * ends, so the lock cannot leak into a pooled session). Losing the connection loses the lock,
 * and `held` turns false at once. The scheduler elects its leader the same way
 * (services/scheduler/src/leadership); services share no code, so this is the supervisor's copy
 * without the LISTEN the scheduler needs.
 */
export class LeaderLock {
  private current: Held | null = null;

  constructor(
    private readonly pool: Pool,
    private readonly name: string,
    private readonly onLost: (reason: string) => void,
  ) {}

  get held(): boolean {
    return this.current !== null;
  }

  async tryAcquire(): Promise<boolean> {
    if (this.current) return true;
    const client = await this.pool.connect();
    let acquired: boolean;
    try {
      const { rows } = await client.query<{ acquired: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS acquired', [LOCK_NAMESPACE, this.name]);
      acquired = rows[0]?.acquired === true;
    } catch (error) {
      client.release(error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
    if (!acquired) {
      client.release();
      return false;
    }
    const held: Held = { client, done: false };
    const lose = (reason: string, error?: Error) => {
      const wasLeading = this.current === held;
      if (this.finish(held, error ?? new Error(reason)) && wasLeading) this.onLost(reason);
    };
    client.on('error', (error: Error) => lose(`leadership connection failed: ${error.message}`, error));
    client.on('end', () => lose('leadership connection ended'));
    this.current = held;
    return true;
  }

  /**
   * Whether the lock is still ours, asked of the server: a leader whose connection died without
   * an event yet finds out here, before it acts.
   */
  async confirm(): Promise<boolean> {
    const held = this.current;
    if (!held) return false;
    try {
      await held.client.query('SELECT 1');
      return this.current === held;
    } catch (error) {
      if (this.finish(held, error instanceof Error ? error : new Error(String(error)))) this.onLost('leadership connection failed');
      return false;
    }
  }

  /** Gives the leadership up: unlock, then close the connection. */
  async release(): Promise<void> {
    const held = this.current;
    if (!held) return;
    this.current = null;
    await held.client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_NAMESPACE, this.name]).catch(() => undefined);
    this.finish(held);
  }

  private finish(held: Held, error?: Error): boolean {
    if (held.done) return false;
    held.done = true;
    if (this.current === held) this.current = null;
    held.client.release(error ?? true);
    return true;
  }
}
