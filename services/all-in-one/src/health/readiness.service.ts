import { Inject, Injectable } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Pool } from 'pg';
import type { Redis } from 'ioredis';
import { NATS_CONNECTION } from '@packetagent/bus';
import { GATEWAY_REDIS } from '@packetagent/gateway';
import { OutboxRelay, PG_POOL } from '@packetagent/eventstore';
import { ENV } from '../tokens';
import type { Env } from '../env';

export interface Check {
  ok: boolean;
  detail: string;
  [key: string]: unknown;
}

export interface Readiness {
  status: 'ready' | 'not_ready';
  failing: string[];
  checks: { postgres: Check; nats: Check; redis: Check; relay: Check };
}

const CHECK_TIMEOUT_MS = 2_000;

function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function failure(error: unknown): Check {
  return { ok: false, detail: error instanceof Error ? error.message : String(error) };
}

@Injectable()
export class ReadinessService {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    private readonly relay: OutboxRelay,
    @Inject(GATEWAY_REDIS) private readonly redis: Redis,
    @Inject(ENV) private readonly env: Env,
  ) {}

  async check(): Promise<Readiness> {
    const [postgres, nats, redis] = await Promise.all([this.postgres(), this.nats(), this.redisPing()]);
    const relay = postgres.ok ? await this.relayLag() : { ok: false, detail: 'needs postgres' };
    const checks = { postgres, nats, redis, relay };
    const failing = Object.entries(checks).filter(([, check]) => !check.ok).map(([name]) => name);
    return { status: failing.length ? 'not_ready' : 'ready', failing, checks };
  }

  private async postgres(): Promise<Check> {
    try {
      await within(this.pool.query('SELECT 1'), 'postgres');
      return { ok: true, detail: 'connected' };
    } catch (error) {
      return failure(error);
    }
  }

  private async nats(): Promise<Check> {
    if (this.nc.isClosed()) return { ok: false, detail: 'connection closed' };
    try {
      const rttMs = await within(this.nc.rtt(), 'nats');
      return { ok: true, detail: 'connected', rttMs };
    } catch (error) {
      return failure(error);
    }
  }

  /** Sessions and login throttling live in Redis: without it nobody can sign in. */
  private async redisPing(): Promise<Check> {
    try {
      await within(this.redis.ping(), 'redis');
      return { ok: true, detail: 'connected' };
    } catch (error) {
      return failure(error);
    }
  }

  private async relayLag(): Promise<Check> {
    const status = this.relay.status();
    try {
      const lag = await within(this.relay.lag(), 'relay lag query');
      const tooOld = lag.stalledMs > this.env.PACKETAGENT_READY_MAX_RELAY_LAG_MS;
      return {
        ok: !tooOld,
        detail: tooOld
          ? `${lag.events} event(s) unpublished for ${lag.stalledMs} ms (limit ${this.env.PACKETAGENT_READY_MAX_RELAY_LAG_MS} ms)`
          : `${status.role}; ${lag.events} event(s) behind`,
        role: status.role,
        cursor: lag.cursor,
        behind: lag.events,
        stalledMs: lag.stalledMs,
        lastError: status.lastError,
      };
    } catch (error) {
      return failure(error);
    }
  }
}
