import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { BUS_TOPOLOGY, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import { SANDBOX_OPTIONS, type ResolvedSandboxOptions } from '../sandbox.options';
import { recordedAsEvents, type ExecRunner } from './exec-runner';
import type { ExecStore } from './exec-store';
import { orphanResult } from './orphan-result';
import type { ExecRecord } from '@packetagent/contracts';
import { EXEC_RUNNER, EXEC_STORE } from '../sandbox.tokens';

const FORWARD_TIMEOUT_MS = 2_000;

/**
 * What one replica asks of another about the execs it runs. A cancel reaches one replica
 * (commands go to a queue group) while the exec runs on the one its record names: the cancel is
 * forwarded there. A record left `running` by a replica that no longer answers (its processes
 * died with it) is ended as such, so nobody waits on it.
 */
@Injectable()
export class ReplicaLink implements OnApplicationBootstrap, OnModuleDestroy {
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
          const request = message.json<{ workspaceId: string; execId: string; ping?: boolean }>();
          if (request.ping) return void message.respond(JSON.stringify({ running: this.runner.isRunning(request.workspaceId, request.execId) }));
          message.respond(JSON.stringify({ found: this.runner.cancel(request.workspaceId, request.execId) }));
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

  /**
   * The record, ended `killed` with the reason when it says `running` on a replica that does not
   * run it (NATS answers at once when no one listens on that replica's subject).
   */
  async settle(record: ExecRecord & { replica: string }): Promise<ExecRecord> {
    const { replica, ...rest } = record;
    if (rest.state !== 'running' || replica === this.options.replicaId) return rest;
    let running = true;
    try {
      const reply = await this.nc.request(this.subject(replica), JSON.stringify({ workspaceId: rest.workspaceId, execId: rest.execId, ping: true }), { timeout: FORWARD_TIMEOUT_MS });
      running = reply.json<{ running: boolean }>().running;
    } catch (error) {
      // No responders: the replica is gone. A timeout says nothing; the record stays as it is.
      running = !/no responders/i.test(error instanceof Error ? `${error.name} ${error.message}` : String(error));
    }
    if (running) return rest;
    const result = orphanResult(rest, new Date());
    await this.store.finish(result, recordedAsEvents({ runId: rest.runId ?? undefined, requestedBy: rest.requestedBy }) ? { actor: rest.requestedBy } : null);
    return (await this.store.get(rest.workspaceId, rest.execId)) ?? { ...rest, state: result.state, result };
  }

  private subject(replicaId: string): string {
    return `${this.topo.commandSubjectRoot}.sandbox.replica.${replicaId.replace(/[^A-Za-z0-9_-]/g, '_')}.cancel`;
  }
}
