import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { BUS_TOPOLOGY, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import { SANDBOX_OPTIONS, type ResolvedSandboxOptions } from '../sandbox.options';
import type { ExecRunner } from './exec-runner';
import type { ExecStore } from './exec-store';
import { EXEC_RUNNER, EXEC_STORE } from '../sandbox.tokens';

const FORWARD_TIMEOUT_MS = 2_000;

/**
 * A cancel reaches one replica (commands go to a queue group); the exec runs on one replica,
 * which its record names. A cancel for an exec this replica does not run is forwarded there.
 */
@Injectable()
export class CancelForwarding implements OnApplicationBootstrap, OnModuleDestroy {
  private subscription: Subscription | null = null;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_TOPOLOGY) private readonly topo: Topology,
    @Inject(SANDBOX_OPTIONS) private readonly options: ResolvedSandboxOptions,
    @Inject(EXEC_RUNNER) private readonly runner: ExecRunner,
    @Inject(EXEC_STORE) private readonly store: ExecStore,
  ) {}

  onApplicationBootstrap(): void {
    this.subscription = this.nc.subscribe(this.subject(this.options.replicaId), {
      callback: (error, message) => {
        if (error) return;
        try {
          const { workspaceId, execId } = message.json<{ workspaceId: string; execId: string }>();
          message.respond(JSON.stringify({ found: this.runner.cancel(workspaceId, execId) }));
        } catch {
          message.respond(JSON.stringify({ found: false }));
        }
      },
    });
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
    this.subscription = null;
  }

  async cancel(workspaceId: string, execId: string): Promise<boolean> {
    if (this.runner.cancel(workspaceId, execId)) return true;
    const record = await this.store.get(workspaceId, execId);
    if (!record || record.state !== 'running' || record.replica === this.options.replicaId) return false;
    try {
      const reply = await this.nc.request(this.subject(record.replica), JSON.stringify({ workspaceId, execId }), { timeout: FORWARD_TIMEOUT_MS });
      return reply.json<{ found: boolean }>().found;
    } catch {
      // The replica is gone, and its processes with it (they die with their parent).
      return false;
    }
  }

  private subject(replicaId: string): string {
    return `${this.topo.commandSubjectRoot}.sandbox.replica.${replicaId.replace(/[^A-Za-z0-9_-]/g, '_')}.cancel`;
  }
}
