import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { BUS_TOPOLOGY, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import type { McpCallResult } from '@packetagent/contracts';
import { ReplicaChannel } from '../replicas/replica-channel';
import type { RunHolders, RunKey } from '../replicas/run-holders';
import { SANDBOX_OPTIONS, type ResolvedSandboxOptions } from '../sandbox.options';
import { MCP_HOLDERS, MCP_SESSIONS } from '../sandbox.tokens';
import type { McpCallRequest, McpSessions } from './mcp-sessions';

/** Beyond the server's own timeout, for the holder to answer a forwarded call or close. */
const FORWARD_MARGIN_MS = 10_000;

type Forwarded = { kind: 'call'; request: McpCallRequest } | { kind: 'close'; key: RunKey };
type Answer = McpCallResult | { closed: number };

/**
 * One set of MCP sessions per run across replicas: the first replica to serve a run's call holds
 * its sessions (sandbox.mcp_holders), and a call or close reaching another replica is forwarded to
 * the holder. A holder that no longer answers is replaced; the run then gets fresh sessions, and
 * repeats by call key are kept from running twice by the run's effect receipts, not by this memory.
 */
@Injectable()
export class McpRouting implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly channel: ReplicaChannel<Forwarded, Answer>;

  constructor(
    @Inject(MCP_SESSIONS) private readonly sessions: McpSessions,
    @Inject(MCP_HOLDERS) private readonly holders: RunHolders,
    @Inject(NATS_CONNECTION) nc: NatsConnection,
    @Inject(BUS_TOPOLOGY) topo: Topology,
    @Inject(SANDBOX_OPTIONS) private readonly options: ResolvedSandboxOptions,
  ) {
    this.channel = new ReplicaChannel(nc, topo, 'mcp');
  }

  onApplicationBootstrap(): void {
    this.channel.serve(this.options.replicaId, (forwarded) => (forwarded.kind === 'call' ? this.sessions.call(forwarded.request) : this.closeHere(forwarded.key)));
  }

  async onModuleDestroy(): Promise<void> {
    this.channel.close();
    try {
      await this.holders.releaseAll();
    } catch (error) {
      this.options.log('warn', `sandbox: could not release this replica's MCP runs (${error instanceof Error ? error.message : String(error)}); their next calls replace it`);
    }
  }

  async call(request: McpCallRequest): Promise<McpCallResult> {
    const key = { workspaceId: request.workspaceId, runId: request.runId };
    // Twice at most: a holder found gone is replaced by this replica unless another replaced it first.
    for (let attempt = 0; attempt < 2 && !this.sessions.has(key); attempt++) {
      const holder = await this.holders.claim(key);
      if (holder === this.options.replicaId) break;
      const forwarded = await this.channel.askIfThere(holder, { kind: 'call', request }, request.server.timeoutMs + FORWARD_MARGIN_MS);
      if (forwarded !== null) return forwarded as McpCallResult;
      if (await this.holders.takeOver(key, holder)) break;
    }
    return this.sessions.call(request);
  }

  async close(key: RunKey): Promise<{ closed: number }> {
    if (this.sessions.has(key)) return this.closeHere(key);
    const holder = await this.holders.holderOf(key);
    if (!holder || holder === this.options.replicaId) return this.closeHere(key);
    const forwarded = await this.channel.askIfThere(holder, { kind: 'close', key }, FORWARD_MARGIN_MS);
    if (forwarded !== null) return forwarded as { closed: number };
    // The holder is gone, and its sessions (and stdio servers) with it.
    await this.holders.release(key, holder);
    return { closed: 0 };
  }

  private async closeHere(key: RunKey): Promise<{ closed: number }> {
    const closed = await this.sessions.close(key.workspaceId, key.runId);
    await this.holders.release(key);
    return { closed };
  }

}
