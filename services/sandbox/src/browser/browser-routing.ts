import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Pool } from 'pg';
import { BUS_TOPOLOGY, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import type { BrowserActResult } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import { SANDBOX_OPTIONS, type ResolvedSandboxOptions } from '../sandbox.options';
import { BROWSER_SESSIONS } from '../sandbox.tokens';
import type { BrowserSessions, RunBrowserKey } from './browser-sessions';
import type { ParsedBrowserActRequest } from './page-actions';

/** Beyond the action's own timeout, for the holder to answer a forwarded action. */
const FORWARD_MARGIN_MS = 10_000;

type Forwarded = { kind: 'act'; request: ParsedBrowserActRequest } | { kind: 'close'; key: RunBrowserKey };

function noResponders(error: unknown): boolean {
  return /no responders/i.test(error instanceof Error ? `${error.name} ${error.message}` : String(error));
}

/**
 * One browser context per run across replicas: the first replica to act for a run holds its
 * context (sandbox.browser_sessions), and an action reaching another replica is forwarded to the
 * holder. A holder that no longer answers is replaced; the run then gets a fresh page.
 */
@Injectable()
export class BrowserRouting implements OnApplicationBootstrap, OnModuleDestroy {
  private subscription: Subscription | null = null;

  constructor(
    @Inject(BROWSER_SESSIONS) private readonly sessions: BrowserSessions,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_TOPOLOGY) private readonly topo: Topology,
    @Inject(SANDBOX_OPTIONS) private readonly options: ResolvedSandboxOptions,
  ) {}

  onApplicationBootstrap(): void {
    this.subscription = this.nc.subscribe(this.subject(this.options.replicaId), {
      callback: (error, message) => {
        if (error) return;
        let answer: Promise<unknown>;
        try {
          const forwarded = message.json<Forwarded>();
          answer = forwarded.kind === 'act' ? this.sessions.act(forwarded.request) : this.closeHere(forwarded.key);
        } catch (failure) {
          answer = Promise.reject(failure);
        }
        answer.then(
          (result) => message.respond(JSON.stringify({ ok: true, result })),
          (failure: unknown) => message.respond(JSON.stringify({ ok: false, message: failure instanceof Error ? failure.message : String(failure) })),
        );
      },
    });
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
    this.subscription = null;
  }

  async act(request: ParsedBrowserActRequest): Promise<BrowserActResult> {
    const key = { workspaceId: request.workspaceId, runId: request.runId };
    if (this.sessions.has(key)) return this.sessions.act(request);
    const holder = await this.claim(key);
    if (holder !== this.options.replicaId) {
      const forwarded = await this.forward<BrowserActResult>(holder, { kind: 'act', request }, request.timeoutMs + FORWARD_MARGIN_MS);
      if (forwarded !== null) return forwarded;
      await this.takeOver(key, holder);
    }
    return this.sessions.act(request);
  }

  async close(key: RunBrowserKey): Promise<{ closed: boolean }> {
    if (this.sessions.has(key)) return this.closeHere(key);
    const { rows } = await this.pool.query<{ replica: string }>('SELECT replica FROM sandbox.browser_sessions WHERE workspace_id = $1 AND run_id = $2', [key.workspaceId, key.runId]);
    const holder = rows[0]?.replica;
    if (!holder || holder === this.options.replicaId) return this.closeHere(key);
    const forwarded = await this.forward<{ closed: boolean }>(holder, { kind: 'close', key }, FORWARD_MARGIN_MS);
    if (forwarded !== null) return forwarded;
    // The holder is gone, and its Chromium with it.
    await this.pool.query('DELETE FROM sandbox.browser_sessions WHERE workspace_id = $1 AND run_id = $2 AND replica = $3', [key.workspaceId, key.runId, holder]);
    return { closed: false };
  }

  private async closeHere(key: RunBrowserKey): Promise<{ closed: boolean }> {
    const closed = await this.sessions.close(key);
    await this.pool.query('DELETE FROM sandbox.browser_sessions WHERE workspace_id = $1 AND run_id = $2 AND replica = $3', [key.workspaceId, key.runId, this.options.replicaId]);
    return closed;
  }

  /** The run's holder: this replica when none was recorded. */
  private async claim(key: RunBrowserKey): Promise<string> {
    const { rows } = await this.pool.query<{ replica: string }>(
      `INSERT INTO sandbox.browser_sessions (workspace_id, run_id, replica) VALUES ($1, $2, $3)
       ON CONFLICT (workspace_id, run_id) DO UPDATE SET replica = sandbox.browser_sessions.replica
       RETURNING replica`,
      [key.workspaceId, key.runId, this.options.replicaId],
    );
    return rows[0]!.replica;
  }

  private async takeOver(key: RunBrowserKey, from: string): Promise<void> {
    await this.pool.query('UPDATE sandbox.browser_sessions SET replica = $4, opened_at = now() WHERE workspace_id = $1 AND run_id = $2 AND replica = $3', [key.workspaceId, key.runId, from, this.options.replicaId]);
  }

  /** The holder's answer, or null when no one listens for that replica any more. */
  private async forward<T>(holder: string, forwarded: Forwarded, timeoutMs: number): Promise<T | null> {
    let reply;
    try {
      reply = await this.nc.request(this.subject(holder), JSON.stringify(forwarded), { timeout: timeoutMs });
    } catch (error) {
      if (noResponders(error)) return null;
      throw error;
    }
    const answer = reply.json<{ ok: true; result: T } | { ok: false; message: string }>();
    if (!answer.ok) throw new Error(`the replica holding the run's browser failed: ${answer.message}`);
    return answer.result;
  }

  private subject(replicaId: string): string {
    return `${this.topo.commandSubjectRoot}.sandbox.replica.${replicaId.replace(/[^A-Za-z0-9_-]/g, '_')}.browser`;
  }
}
