import type { Pool, PoolClient } from 'pg';
import { DomainError } from '@packetagent/contracts';

export class LeadershipLostError extends DomainError {
  readonly code = 'leadership_lost';
  override readonly retryable = true;
  constructor(name: string) {
    super(`${name} lost its leadership connection`);
  }
}

export interface LeaderLockOptions {
  /** Advisory-lock namespace (the first key); each leader role of a service has its own name under it. */
  namespace: number;
  name: string;
  /** Channel to LISTEN on while leading, for a leader that a notification should wake. */
  channel?: string;
  onLost: (reason: string) => void;
  onNotification?: () => void;
}

interface Held {
  client: PoolClient;
  pid: number;
  done: boolean;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * One leader among a service's replicas: a Postgres session advisory lock held on a dedicated
 * connection, taken from the pool and never returned to it (it is destroyed when leadership
 * ends, so the lock can never leak into a pooled session). Losing the connection loses the lock:
 * `held` turns false at once and `onLost` is called, so the leader stops before anyone else can
 * take over. The scheduler and the supervisor's watchdog elect their leaders with it.
 */
export class LeaderLock {
  private current: Held | null = null;

  constructor(
    private readonly pool: Pool,
    private readonly options: LeaderLockOptions,
  ) {}

  get held(): boolean {
    return this.current !== null;
  }

  /** Server process id of the leadership connection (for operators and tests), null when not leading. */
  get backendPid(): number | null {
    return this.current?.pid ?? null;
  }

  /** The leadership connection; writes through it fail once the lock is gone. */
  connection(): PoolClient {
    if (!this.current) throw new LeadershipLostError(this.options.name);
    return this.current.client;
  }

  async tryAcquire(): Promise<boolean> {
    if (this.current) return true;
    const client = await this.pool.connect();
    let row: { acquired: boolean; pid: number };
    try {
      const { rows } = await client.query<{ acquired: boolean; pid: number }>(
        `SELECT pg_try_advisory_lock($1, hashtext($2)) AS acquired, pg_backend_pid() AS pid`,
        [this.options.namespace, this.options.name],
      );
      row = rows[0]!;
    } catch (error) {
      client.release(asError(error));
      throw error;
    }
    if (!row.acquired) {
      client.release();
      return false;
    }
    const held: Held = { client, pid: row.pid, done: false };
    const lose = (reason: string, error?: Error) => {
      const wasLeading = this.current === held;
      if (this.finish(held, error ?? new Error(reason)) && wasLeading) this.options.onLost(reason);
    };
    client.on('error', (error: Error) => lose(`leadership connection failed: ${error.message}`, error));
    client.on('end', () => lose('leadership connection ended'));
    const { channel, onNotification } = this.options;
    if (channel) {
      if (onNotification) client.on('notification', () => onNotification());
      try {
        await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
      } catch (error) {
        this.finish(held, asError(error));
        throw error;
      }
    }
    if (held.done) return false;
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
      if (this.finish(held, asError(error))) this.options.onLost('leadership connection failed');
      return false;
    }
  }

  /** Gives the leadership up: unlock, then close the connection. */
  async release(): Promise<void> {
    const held = this.current;
    if (!held) return;
    this.current = null;
    await held.client.query(`SELECT pg_advisory_unlock($1, hashtext($2))`, [this.options.namespace, this.options.name]).catch(() => undefined);
    this.finish(held);
  }

  /** Closes the connection for good (the lock, if still held, goes with it). */
  private finish(held: Held, error?: Error): boolean {
    if (held.done) return false;
    held.done = true;
    if (this.current === held) this.current = null;
    held.client.release(error ?? true);
    return true;
  }
}
