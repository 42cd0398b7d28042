import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { BUS_TOPOLOGY, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import type { BrowserActResult } from '@packetagent/contracts';
import { ReplicaChannel } from '../replicas/replica-channel';
import type { RunHolders } from '../replicas/run-holders';
import { SANDBOX_OPTIONS, type ResolvedSandboxOptions } from '../sandbox.options';
import { BROWSER_HOLDERS, BROWSER_SESSIONS } from '../sandbox.tokens';
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
    @Inject(BROWSER_HOLDERS) private readonly holders: RunHolders,
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
    const holder = await this.holders.claim(key);
    if (holder !== this.options.replicaId) {
      const forwarded = await this.channel.askIfThere(holder, { kind: 'act', request }, request.timeoutMs + FORWARD_MARGIN_MS);
      if (forwarded !== null) return forwarded as BrowserActResult;
      await this.holders.takeOver(key, holder);
    }
    return this.sessions.act(request);
  }

  async close(key: RunBrowserKey): Promise<{ closed: boolean }> {
    if (this.sessions.has(key)) return this.closeHere(key);
    const holder = await this.holders.holderOf(key);
    if (!holder || holder === this.options.replicaId) return this.closeHere(key);
    const forwarded = await this.channel.askIfThere(holder, { kind: 'close', key }, FORWARD_MARGIN_MS);
    if (forwarded !== null) return forwarded as { closed: boolean };
    // The holder is gone, and its Chromium with it.
    await this.holders.release(key, holder);
    return { closed: false };
  }

  private async closeHere(key: RunBrowserKey): Promise<{ closed: boolean }> {
    const closed = await this.sessions.close(key);
    await this.holders.release(key);
    return closed;
  }


}
