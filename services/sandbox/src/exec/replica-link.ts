import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { NatsConnection } from '@nats-io/transport-node';
import { BUS_TOPOLOGY, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import type { ExecRecord } from '@packetagent/contracts';
import { ReplicaChannel, ReplicaGoneError } from '../replicas/replica-channel';
import { SANDBOX_OPTIONS, type ResolvedSandboxOptions } from '../sandbox.options';
import { COMPUTER_EXECS, DRIVER_SELECTION, EXEC_RUNNER, EXEC_STORE } from '../sandbox.tokens';
import type { ComputerExecs } from '../computers/computer-execs';
import type { DriverSelection } from '../drivers/driver-selection';
import { recordedAsEvents, type ExecRunner } from './exec-runner';
import type { ExecStore } from './exec-store';
import { orphanResult } from './orphan-result';

const FORWARD_TIMEOUT_MS = 2_000;

type ExecQuestion = { kind: 'cancel' | 'running'; workspaceId: string; execId: string };

/**
 * What one replica asks of another about the execs it runs. A cancel reaches one replica
 * (commands go to a queue group) while the exec runs on the one its record names: the cancel is
 * forwarded there. A record left `running` by a replica that no longer answers (its processes
 * died with it) is ended as such, so nobody waits on it.
 */
@Injectable()
export class ReplicaLink implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly channel: ReplicaChannel<ExecQuestion, boolean>;

  constructor(
    @Inject(NATS_CONNECTION) nc: NatsConnection,
    @Inject(BUS_TOPOLOGY) topo: Topology,
    @Inject(SANDBOX_OPTIONS) private readonly options: ResolvedSandboxOptions,
    @Inject(EXEC_RUNNER) private readonly runner: ExecRunner,
    @Inject(EXEC_STORE) private readonly store: ExecStore,
    @Inject(DRIVER_SELECTION) private readonly drivers: DriverSelection,
    @Inject(COMPUTER_EXECS) private readonly computers: ComputerExecs,
  ) {
    this.channel = new ReplicaChannel(nc, topo, 'execs');
  }

  onApplicationBootstrap(): void {
    this.channel.serve(this.options.replicaId, (question) =>
      question.kind === 'cancel' ? this.runner.cancel(question.workspaceId, question.execId) : this.runner.isRunning(question.workspaceId, question.execId),
    );
  }

  onModuleDestroy(): void {
    this.channel.close();
  }

  async cancel(workspaceId: string, execId: string): Promise<boolean> {
    if (this.runner.cancel(workspaceId, execId)) return true;
    const record = await this.store.get(workspaceId, execId);
    if (!record || record.state !== 'running' || record.replica === this.options.replicaId) return false;
    try {
      return await this.channel.ask(record.replica, { kind: 'cancel', workspaceId, execId }, FORWARD_TIMEOUT_MS);
    } catch (error) {
      if (!(error instanceof ReplicaGoneError)) return false;
      // A command on a computer outlives its replica: its group is killed there and the exec ended.
      if (record.driver === 'ssh') return (await this.settle(record)).result?.killConfirmed === true;
      // A replica that is gone took its processes with it, almost always; what it left on this host ends now.
      return (await this.drivers.reclaim()) > 0;
    }
  }

  /**
   * The record, ended `killed` with the reason when it says `running` on a replica that no
   * longer runs it. A replica that does not answer in time says nothing: the record stays.
   */
  async settle(record: ExecRecord & { replica: string; remotePgid?: number | null }): Promise<ExecRecord> {
    const { replica, remotePgid, ...rest } = record;
    if (rest.state !== 'running' || replica === this.options.replicaId) return rest;
    const running = await this.channel.ask(replica, { kind: 'running', workspaceId: rest.workspaceId, execId: rest.execId }, FORWARD_TIMEOUT_MS).catch((error: unknown) => !(error instanceof ReplicaGoneError));
    if (running) return rest;
    await this.drivers.reclaim();
    const remoteKill = rest.driver === 'ssh' && rest.computer && remotePgid ? await this.reclaimRemote(rest.workspaceId, rest.computer, remotePgid) : null;
    const result = orphanResult(rest, new Date(), remoteKill);
    await this.store.finish(result, recordedAsEvents({ runId: rest.runId ?? undefined, requestedBy: rest.requestedBy }) ? { actor: rest.requestedBy } : null);
    const ended = await this.store.get(rest.workspaceId, rest.execId);
    if (!ended) return { ...rest, state: result.state, result };
    const { replica: _replica, remotePgid: _pgid, ...settled } = ended;
    return settled;
  }

  private reclaimRemote(workspaceId: string, computer: string, pgid: number): Promise<boolean> {
    return this.computers.reclaim(workspaceId, computer, pgid).catch((error: unknown) => {
      this.options.log('warn', `sandbox: a command a stopped replica left on ${computer} could not be killed`, { workspaceId, pgid, error: error instanceof Error ? error.message : String(error) });
      return false;
    });
  }
}
