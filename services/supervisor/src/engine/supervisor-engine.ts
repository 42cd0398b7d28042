import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { BUS_TOPOLOGY, CommandBus, EVENT_REGISTRY, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import { DomainError, McpCommands, PolicyCommands, runStreamId, SandboxCommands, type EventRegistry, type RunExecutionEventData } from '@packetagent/contracts';
import { PayloadStore, PostgresEventStore } from '@packetagent/eventstore';
import type { ProviderRouter, ResolvedModel } from '@packetagent/providers';
import type { ToolRegistry } from '@packetagent/tools';
import { RunClaims, type ReleaseStatus } from '../claims/run-claims';
import { readRunHistory } from '../execution/adapters/store-run-stream';
import { RunPinning } from './run-pinning';
import { RunExecution, type DriveOutcome } from '../execution/run-execution';
import { runPorts, type RunInfrastructure } from '../execution/run-ports';
import { SUPERVISOR_ACTOR } from '../execution/supervisor-actor';
import type { PinnedRun } from '../run/run.intent';
import { browserUrlsOf } from './browser-urls';
import { foldRun, UnreplayableRunError, type RunAggregate } from '../run/run.state';
import { PROVIDER_ROUTER, SUPERVISOR_OPTIONS, TOOL_REGISTRY, type SupervisorOptions } from '../supervisor.options';

export type WakeResult = 'done' | 'busy';

export interface SupervisorStatus {
  replicaId: string;
  driving: number;
  started: number;
  finished: number;
  recovered: number;
  quarantined: number;
}

type Release = { status: ReleaseStatus; waitingOn?: string | null; quarantineReason?: string | null };

/** How long a replica holding a run has to answer a forwarded control request, in milliseconds. */
const FORWARD_TIMEOUT_MS = 1_000;

/**
 * Claims runs and drives them. A run is taken when something wakes it (its admission, an
 * operator request, an answer, its wall-time timer) or when recovery finds its holder's lease
 * lapsed; while driving, the lease is renewed. An operator request for a run another replica
 * drives is forwarded to that replica, which cuts the call in flight.
 */
@Injectable()
export class SupervisorEngine implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly active = new Map<string, RunExecution | null>();
  private readonly drives = new Set<Promise<unknown>>();
  private timers: NodeJS.Timeout[] = [];
  private subscription: Subscription | null = null;
  private closing = false;
  private readonly counters = { started: 0, finished: 0, recovered: 0, quarantined: 0 };

  constructor(
    private readonly store: PostgresEventStore,
    private readonly payloads: PayloadStore,
    private readonly commands: CommandBus,
    @Inject(EVENT_REGISTRY) private readonly registry: EventRegistry,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_TOPOLOGY) private readonly topo: Topology,
    private readonly claims: RunClaims,
    private readonly pinning: RunPinning,
    @Inject(SUPERVISOR_OPTIONS) private readonly options: SupervisorOptions,
    @Inject(PROVIDER_ROUTER) private readonly router: ProviderRouter,
    @Inject(TOOL_REGISTRY) private readonly tools: ToolRegistry,
  ) {}

  status(): SupervisorStatus {
    return { replicaId: this.options.replicaId, driving: this.active.size, ...this.counters };
  }

  onApplicationBootstrap(): void {
    this.subscription = this.nc.subscribe(this.controlSubject(this.options.replicaId), {
      callback: (error, message) => {
        if (error) return;
        try {
          const { runId, controlVersion } = message.json<{ runId: string; controlVersion: number }>();
          message.respond(JSON.stringify({ applied: this.interruptLocal(runId, controlVersion) }));
        } catch {
          message.respond(JSON.stringify({ applied: false }));
        }
      },
    });
    this.timers.push(setInterval(() => void this.renewLeases(), Math.max(100, Math.floor(this.options.leaseMs / 3))));
    this.timers.push(setInterval(() => void this.recoverLapsed(), this.options.recoveryIntervalMs));
    void this.recoverLapsed();
  }

  /** Interrupts every run in hand (each is left for another replica to claim) and waits for them. */
  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    this.timers.forEach(clearInterval);
    this.timers = [];
    this.subscription?.unsubscribe();
    this.subscription = null;
    for (const execution of this.active.values()) execution?.interrupt('shutdown');
    await Promise.allSettled([...this.drives]);
  }

  /** Drives the run if no one else holds it; answers `busy` when someone does (or this replica is full). */
  async wake(runId: string, workspaceId: string): Promise<WakeResult> {
    if (this.closing || this.active.has(runId) || this.active.size >= this.options.concurrency) return 'busy';
    this.active.set(runId, null);
    const drive = this.claimAndDrive(runId, workspaceId);
    this.drives.add(drive);
    try {
      return await drive;
    } finally {
      this.drives.delete(drive);
      this.active.delete(runId);
    }
  }

  /**
   * An operator request recorded at `controlVersion` of the run's control stream: `done` once
   * the run has folded it (or ended), `busy` while it has not yet (the delivery comes back).
   */
  async control(runId: string, workspaceId: string, controlVersion: number): Promise<WakeResult> {
    if (this.active.has(runId)) return this.interruptLocal(runId, controlVersion) ? 'done' : 'busy';
    if ((await this.wake(runId, workspaceId)) === 'done') return 'done';
    const holder = await this.claims.holder(runId);
    if (!holder || holder === this.options.replicaId) return 'busy';
    try {
      const reply = await this.nc.request(this.controlSubject(holder), JSON.stringify({ runId, controlVersion }), { timeout: FORWARD_TIMEOUT_MS });
      return reply.json<{ applied: boolean }>().applied ? 'done' : 'busy';
    } catch {
      // The holder is gone or slow: its lease lapses and the next claim folds the request.
      return 'busy';
    }
  }

  /** True when the run this replica drives has folded the request; otherwise cuts its call in flight so it reads it. */
  private interruptLocal(runId: string, controlVersion: number): boolean {
    const execution = this.active.get(runId);
    if (!execution) return false;
    if (execution.runState.controlVersion >= controlVersion || execution.runState.status === 'terminal') return true;
    execution.interrupt('control');
    return false;
  }

  private controlSubject(replicaId: string): string {
    return `${this.topo.commandSubjectRoot}.supervisor.replica.${replicaId.replace(/[^A-Za-z0-9_-]/g, '_')}.control`;
  }

  private async claimAndDrive(runId: string, workspaceId: string): Promise<WakeResult> {
    const claim = await this.claims.claim(runId, workspaceId, this.options.replicaId);
    if (claim.kind === 'held') return 'busy';
    if (claim.kind === 'finished') return 'done';
    let release: Release | null = { status: 'active' };
    try {
      release = await this.driveClaimed(runId, workspaceId, claim.claim);
    } catch (error) {
      // Something unexpected: leave the claim to lapse, so the run is tried again after the lease.
      release = null;
      this.options.log('error', 'run drive failed', { runId, error: error instanceof Error ? error.message : String(error) });
    } finally {
      if (release) await this.claims.release(runId, this.options.replicaId, release.status, release);
    }
    return 'done';
  }

  private async driveClaimed(runId: string, workspaceId: string, claim: number): Promise<Release> {
    let state: RunAggregate;
    try {
      state = foldRun(runId, workspaceId, await readRunHistory(this.store, this.registry, this.payloads, { runId, workspaceId }, 1));
    } catch (error) {
      if (!(error instanceof UnreplayableRunError || error instanceof DomainError)) throw error;
      this.counters.quarantined += 1;
      this.options.log('error', 'run quarantined: its events cannot be replayed', { runId, reason: error.message });
      await this.raiseQuarantine(runId, workspaceId, error.message);
      return { status: 'quarantined', quarantineReason: error.message.slice(0, 1_000) };
    }
    if (state.status === 'terminal') return { status: 'terminal' };
    if (!state.pin || !state.activation || state.status === 'new' || (state.status === 'queued' && !state.admitted)) return { status: 'waiting' };

    let pinned: PinnedRun;
    let model: ResolvedModel;
    try {
      ({ pinned, model } = await this.pinning.pin(state));
    } catch (error) {
      if (error instanceof DomainError && error.retryable) throw error;
      const reason = error instanceof DomainError && error.code === 'definition_mismatch' ? 'definition_unavailable' : 'input_unavailable';
      const data: RunExecutionEventData<'run.failed'> = {
        reason: error instanceof DomainError && /provider|model/.test(error.code) ? 'model_error' : reason,
        detail: (error instanceof Error ? error.message : String(error)).slice(0, 2_000),
      };
      await this.store.append(runStreamId(runId), state.version, [{ type: 'run.failed', data, actor: SUPERVISOR_ACTOR }], { workspaceId });
      return { status: 'terminal' };
    }

    const run = { runId, workspaceId, effectiveDigest: state.pin.effectiveDigest, browserUrls: browserUrlsOf(pinned), mcp: pinned.mcp };
    const execution = new RunExecution(runPorts(run, model, this.infrastructure()), state, pinned, { replica: this.options.replicaId, claim });
    this.active.set(runId, execution);
    if (claim > 1 && state.started) this.counters.recovered += 1;
    if (!state.started) this.counters.started += 1;
    const outcome: DriveOutcome = await execution.drive();
    // A run's browser page lives while the run is driven here; a parked or ended run gets a fresh one.
    if (run.browserUrls.length > 0) this.closeBrowser(runId, workspaceId);
    // So are its MCP sessions (and the stdio servers they started).
    if (run.mcp.size > 0) this.closeMcp(runId, workspaceId);
    switch (outcome.status) {
      case 'terminal':
        this.counters.finished += 1;
        return { status: 'terminal' };
      case 'waiting':
        return { status: 'waiting', waitingOn: outcome.waitingOn };
      case 'interrupted':
        return { status: 'active' };
    }
  }

  private closeBrowser(runId: string, workspaceId: string): void {
    void this.commands.request(SandboxCommands.browserClose, { workspaceId, runId }, { timeoutMs: 5_000 }).catch((error: unknown) => {
      this.options.log('warn', 'the run\'s browser context was not closed; the sandbox closes it when idle', { runId, error: error instanceof Error ? error.message : String(error) });
    });
  }

  private closeMcp(runId: string, workspaceId: string): void {
    void this.commands.request(McpCommands.close, { workspaceId, runId }, { timeoutMs: 5_000 }).catch((error: unknown) => {
      this.options.log('warn', "the run's MCP sessions were not closed; the sandbox closes them when idle or at shutdown", { runId, error: error instanceof Error ? error.message : String(error) });
    });
  }

  private infrastructure(): RunInfrastructure {
    return { store: this.store, payloads: this.payloads, registry: this.registry, commands: this.commands, router: this.router, tools: this.tools, options: this.options };
  }

  /** A quarantined run waits for a person: it is put in the attention inbox with the reason. */
  private async raiseQuarantine(runId: string, workspaceId: string, reason: string): Promise<void> {
    await this.commands
      .request(PolicyCommands.raiseAttention, {
        workspaceId,
        runId,
        kind: 'run_quarantined',
        tool: 'supervisor',
        verb: 'replay',
        resource: null,
        arguments: { reason: reason.slice(0, 1_000) },
      })
      .catch((error: unknown) => {
        this.options.log('error', 'could not raise attention for a quarantined run', { runId, error: error instanceof Error ? error.message : String(error) });
      });
  }

  private async renewLeases(): Promise<void> {
    const held = [...this.active.entries()].filter(([, execution]) => execution !== null).map(([runId]) => runId);
    try {
      const lost = await this.claims.renew(this.options.replicaId, held);
      for (const runId of lost) this.active.get(runId)?.interrupt('lease_lost');
    } catch (error) {
      this.options.log('warn', 'lease renewal failed', { error: error instanceof Error ? error.message : String(error) });
    }
  }

  private async recoverLapsed(): Promise<void> {
    if (this.closing) return;
    const room = this.options.concurrency - this.active.size;
    if (room <= 0) return;
    try {
      for (const run of await this.claims.lapsed(room)) void this.wake(run.runId, run.workspaceId);
    } catch (error) {
      this.options.log('warn', 'recovery sweep failed', { error: error instanceof Error ? error.message : String(error) });
    }
  }
}
