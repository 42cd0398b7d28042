import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Pool } from 'pg';
import { BUS_TOPOLOGY, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import type { BrowserActResult } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import { ReplicaChannel, ReplicaGoneError } from '../replicas/replica-channel';
import { SANDBOX_OPTIONS, type ResolvedSandboxOptions } from '../sandbox.options';
import { BROWSER_SESSIONS } from '../sandbox.tokens';
import type { BrowserSessions, RunBrowserKey } from './browser-sessions';
import type { ParsedBrowserActRequest } from './page-actions';

/** Beyond the action's own timeout, for the holder to answer a forwarded action. */
const FORWARD_MARGIN_MS = 10_000;

type Forwarded = { kind: 'act'; request: ParsedBrowserActRequest } | { kind: 'close'; key: RunBrowserKey };

/**
 * One browser context per run across replicas: the first replica to act for a run holds its
 * context (sandbox.browser_sessions), and an action reaching another replica is forwarded to the
 * holder. A holder that no longer answers is replaced; the run then gets a fresh page.
 */
@Injectable()
export class BrowserRouting implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly channel: ReplicaChannel<Forwarded, BrowserActResult | { closed: boolean }>;

  constructor(
    @Inject(BROWSER_SESSIONS) private readonly sessions: BrowserSessions,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(NATS_CONNECTION) nc: NatsConnection,
    @Inject(BUS_TOPOLOGY) topo: Topology,
    @Inject(SANDBOX_OPTIONS) private readonly options: ResolvedSandboxOptions,
  ) {
    this.channel = new ReplicaChannel(nc, topo, 'browser');
  }

  onApplicationBootstrap(): void {
    this.channel.serve(this.options.replicaId, (forwarded) => (forwarded.kind === 'act' ? this.sessions.act(forwarded.request) : this.closeHere(forwarded.key)));
  }

  onModuleDestroy(): void {
    this.channel.close();
  }

  async act(request: ParsedBrowserActRequest): Promise<BrowserActResult> {
    const key = { workspaceId: request.workspaceId, runId: request.runId };
    if (this.sessions.has(key)) return this.sessions.act(request);
    const holder = await this.claim(key);
    if (holder !== this.options.replicaId) {
      const forwarded = await this.forward(holder, { kind: 'act', request }, request.timeoutMs + FORWARD_MARGIN_MS);
      if (forwarded !== null) return forwarded as BrowserActResult;
      await this.takeOver(key, holder);
    }
    return this.sessions.act(request);
  }

  async close(key: RunBrowserKey): Promise<{ closed: boolean }> {
    if (this.sessions.has(key)) return this.closeHere(key);
    const { rows } = await this.pool.query<{ replica: string }>('SELECT replica FROM sandbox.browser_sessions WHERE workspace_id = $1 AND run_id = $2', [key.workspaceId, key.runId]);
    const holder = rows[0]?.replica;
    if (!holder || holder === this.options.replicaId) return this.closeHere(key);
    const forwarded = await this.forward(holder, { kind: 'close', key }, FORWARD_MARGIN_MS);
    if (forwarded !== null) return forwarded as { closed: boolean };
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
  private async forward(holder: string, forwarded: Forwarded, timeoutMs: number): Promise<BrowserActResult | { closed: boolean } | null> {
    try {
      return await this.channel.ask(holder, forwarded, timeoutMs);
    } catch (error) {
      if (error instanceof ReplicaGoneError) return null;
      throw error;
    }
  }
}
