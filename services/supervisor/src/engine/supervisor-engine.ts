import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { BUS_TOPOLOGY, CommandBus, EVENT_REGISTRY, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import { computeEventDigest, DomainError, PolicyCommands, type DecodedEvent, type EventRegistry, type RunExecutionEventData } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import type { ProviderRouter } from '@packetagent/providers';
import type { ToolRegistry } from '@packetagent/tools';
import { RunClaims, type ReleaseStatus } from '../claims/run-claims';
import type { ExecutionDeps } from '../execution/execution-deps';
import { RunDefinitions } from '../execution/run-definitions';
import { RunExecution, SUPERVISOR_ACTOR, type DriveOutcome } from '../execution/run-execution';
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

/**
 * Claims runs and drives them. A run is taken when something wakes it (its admission, an
 * answer, a resume, its wall-time timer) or when recovery finds its holder's lease lapsed;
 * while driving, the lease is renewed and operator stop/pause requests cut the call in flight.
 */
@Injectable()
export class SupervisorEngine implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly active = new Map<string, RunExecution | null>();
  private readonly drives = new Set<Promise<unknown>>();
  private timers: NodeJS.Timeout[] = [];
  private subscriptions: Subscription[] = [];
  private closing = false;
  private readonly counters = { started: 0, finished: 0, recovered: 0, quarantined: 0 };
  private readonly deps: ExecutionDeps;

  constructor(
    store: PostgresEventStore,
    commands: CommandBus,
    @Inject(EVENT_REGISTRY) private readonly registry: EventRegistry,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_TOPOLOGY) private readonly topo: Topology,
    private readonly claims: RunClaims,
    private readonly definitions: RunDefinitions,
    @Inject(SUPERVISOR_OPTIONS) private readonly options: SupervisorOptions,
    @Inject(PROVIDER_ROUTER) router: ProviderRouter,
    @Inject(TOOL_REGISTRY) tools: ToolRegistry,
  ) {
    this.deps = { store, commands, router, registry: tools, options, now: () => new Date(), readRun: (runId, from) => this.readRun(runId, from) };
  }

  status(): SupervisorStatus {
    return { replicaId: this.options.replicaId, driving: this.active.size, ...this.counters };
  }

  onApplicationBootstrap(): void {
    for (const request of ['stop_requested', 'pause_requested'] as const) {
      const subscription = this.nc.subscribe(`${this.topo.eventsSubjectRoot}.*.run.run.${request}`, {
        callback: (error, message) => {
          if (error) return;
          try {
            const stream = (message.json() as { stream?: string }).stream ?? '';
            this.active.get(stream.slice('run-'.length))?.interrupt(request === 'stop_requested' ? 'stop' : 'pause');
          } catch {
            // Not an envelope: nothing of ours to interrupt.
          }
        },
      });
      this.subscriptions.push(subscription);
    }
    this.timers.push(setInterval(() => void this.renewLeases(), Math.max(100, Math.floor(this.options.leaseMs / 3))));
    this.timers.push(setInterval(() => void this.recoverLapsed(), this.options.recoveryIntervalMs));
    void this.recoverLapsed();
  }

  /** Interrupts every run in hand (each is left for another replica to claim) and waits for them. */
  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    this.timers.forEach(clearInterval);
    this.timers = [];
    this.subscriptions.forEach((subscription) => subscription.unsubscribe());
    this.subscriptions = [];
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

  private async claimAndDrive(runId: string, workspaceId: string): Promise<WakeResult> {
    const claim = await this.claims.claim(runId, workspaceId, this.options.replicaId);
    if (claim.kind === 'held') return 'busy';
    if (claim.kind === 'finished') return 'done';
    let release: { status: ReleaseStatus; waitingOn?: string | null; quarantineReason?: string | null } | null = { status: 'active' };
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

  private async driveClaimed(runId: string, workspaceId: string, claim: number): Promise<{ status: ReleaseStatus; waitingOn?: string | null; quarantineReason?: string | null }> {
    let state: RunAggregate;
    try {
      state = foldRun(runId, workspaceId, await this.readRun(runId, 1));
    } catch (error) {
      if (!(error instanceof UnreplayableRunError || error instanceof DomainError)) throw error;
      this.counters.quarantined += 1;
      this.options.log('error', 'run quarantined: its events cannot be replayed', { runId, reason: error.message });
      await this.raiseQuarantine(runId, workspaceId, error.message);
      return { status: 'quarantined', quarantineReason: error.message.slice(0, 1_000) };
    }
    if (state.status === 'terminal') return { status: 'terminal' };
    if (!state.pin || !state.activation || state.status === 'new' || (state.status === 'queued' && !state.admitted)) return { status: 'waiting' };
    if (claim > 1 && state.started) this.counters.recovered += 1;

    const abort = new AbortController();
    let definition;
    let model;
    let input;
    try {
      definition = await this.definitions.load(workspaceId, state.pin, abort.signal);
      model = await this.deps.router.resolve(definition.model);
      input = await this.definitions.input(workspaceId, { input: state.activation.input ?? null, inputRef: state.activation.inputRef }, abort.signal);
    } catch (error) {
      if (error instanceof DomainError && error.retryable) throw error;
      const reason = error instanceof DomainError && error.code === 'definition_mismatch' ? 'definition_unavailable' : 'input_unavailable';
      await this.deps.store.append(
        `run-${runId}`,
        state.version,
        [{ type: 'run.failed', data: { reason: error instanceof DomainError && /provider|model/.test(error.code) ? 'model_error' : reason, detail: (error instanceof Error ? error.message : String(error)).slice(0, 2_000) } satisfies RunExecutionEventData<'run.failed'>, actor: SUPERVISOR_ACTOR }],
        { workspaceId },
      );
      return { status: 'terminal' };
    }

    const execution = new RunExecution(this.deps, state, definition, model, claim);
    this.active.set(runId, execution);
    if (!state.started) this.counters.started += 1;
    const outcome: DriveOutcome = await execution.drive(input);
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

  /** A quarantined run waits for a person: it is put in the attention inbox with the reason. */
  private async raiseQuarantine(runId: string, workspaceId: string, reason: string): Promise<void> {
    await this.deps.commands
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

  /** The run's events from `fromVersion`, each checked against its digest chain and decoded. */
  async readRun(runId: string, fromVersion: number): Promise<DecodedEvent[]> {
    const envelopes = await this.deps.store.readStream(`run-${runId}`, { fromVersion });
    let previous: string | null | undefined;
    return envelopes.map((envelope) => {
      const { globalPosition: _position, digest, ...content } = envelope;
      if (computeEventDigest(content) !== digest) throw new UnreplayableRunError(`event at version ${envelope.streamVersion} does not match its digest`);
      if (previous !== undefined && envelope.prevDigest !== previous) throw new UnreplayableRunError(`event at version ${envelope.streamVersion} does not link to the one before it`);
      previous = digest;
      try {
        return this.registry.decode(envelope);
      } catch (error) {
        throw new UnreplayableRunError(`event ${envelope.type} at version ${envelope.streamVersion} cannot be decoded: ${error instanceof Error ? error.message : String(error)}`);
      }
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
