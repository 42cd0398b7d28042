import type { Pool, PoolClient } from 'pg';
import { DomainError } from '@packetagent/contracts';

const LOCK_NAMESPACE = 0x5041_5343; // "PASC"

export class LeadershipLostError extends DomainError {
  readonly code = 'leadership_lost';
  override readonly retryable = true;
  constructor() {
    super('the scheduler lost its leadership connection');
  }
}

export interface LeaderLockOptions {
  name: string;
  /** Channel to LISTEN on while leading. */
  channel: string;
  onLost: (reason: string) => void;
  onNotification: () => void;
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
 * Leadership by a Postgres session advisory lock held on a dedicated connection, taken from the
 * pool and never returned to it (it is destroyed when leadership ends, so the lock can never
 * leak into a pooled session). Losing the connection loses the lock: `held` turns false at
 * once and `onLost` is called, so the leader stops before anyone else can take over.
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
    if (!this.current) throw new LeadershipLostError();
    return this.current.client;
  }

  async tryAcquire(): Promise<boolean> {
    if (this.current) return true;
    const client = await this.pool.connect();
    let row: { acquired: boolean; pid: number };
    try {
      const { rows } = await client.query<{ acquired: boolean; pid: number }>(
        `SELECT pg_try_advisory_lock($1, hashtext($2)) AS acquired, pg_backend_pid() AS pid`,
        [LOCK_NAMESPACE, this.options.name],
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
    client.on('notification', () => this.options.onNotification());
    try {
      await client.query(`LISTEN ${client.escapeIdentifier(this.options.channel)}`);
    } catch (error) {
      this.finish(held, asError(error));
      throw error;
    }
    if (held.done) return false;
    this.current = held;
    return true;
  }

  /** Gives the leadership up: unlock, then close the connection. */
  async release(): Promise<void> {
    const held = this.current;
    if (!held) return;
    this.current = null;
    await held.client.query(`SELECT pg_advisory_unlock($1, hashtext($2))`, [LOCK_NAMESPACE, this.options.name]).catch(() => undefined);
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
