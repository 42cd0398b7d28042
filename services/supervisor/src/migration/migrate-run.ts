import { Inject, Injectable } from '@nestjs/common';
import { CommandBus, EVENT_REGISTRY } from '@packetagent/bus';
import {
  DomainError,
  IntakeCommands,
  MigrationErrorCodes,
  runStreamId,
  type ActorRef,
  type DecodedEvent,
  type EventRegistry,
  type RunExecutionEventData,
  type RunMigrationResult,
} from '@packetagent/contracts';
import { PayloadStore, PostgresEventStore } from '@packetagent/eventstore';
import { RunClaims } from '../claims/run-claims';
import { RunPinning } from '../engine/run-pinning';
import { readRunHistory } from '../execution/adapters/store-run-stream';
import { SUPERVISOR_ACTOR } from '../execution/supervisor-actor';
import { shadowReplay } from '../run/run.migration';
import { foldRun, type RunAggregate } from '../run/run.state';
import { SUPERVISOR_OPTIONS, type SupervisorOptions } from '../supervisor.options';

class MigrationError extends DomainError {
  constructor(
    readonly code: (typeof MigrationErrorCodes)[keyof typeof MigrationErrorCodes],
    message: string,
  ) {
    super(message);
  }
}

export interface MigrateRun {
  workspaceId: string;
  runId: string;
  version: number;
  dryRun: boolean;
  actor: ActorRef;
}

/**
 * Moves a waiting run to the version its deployment pins now, if the run's recorded history,
 * replayed through the decider under the new version, decides the same at every step. The run
 * is held under a lease while it is compared, so no replica drives it meanwhile, and the move
 * is appended at the version read: anything written in between refuses it.
 */
@Injectable()
export class MigrateRunUseCase {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly payloads: PayloadStore,
    @Inject(EVENT_REGISTRY) private readonly registry: EventRegistry,
    private readonly commands: CommandBus,
    private readonly claims: RunClaims,
    private readonly pinning: RunPinning,
    @Inject(SUPERVISOR_OPTIONS) private readonly options: SupervisorOptions,
  ) {}

  async execute(command: MigrateRun): Promise<RunMigrationResult> {
    const state = await this.read(command);
    const target = await this.target(command.workspaceId, state.pin!.deploymentId, command.version);
    return this.migrate(command, target);
  }

  /** Every waiting run of the deployment, each compared (and with `dryRun: false`, moved) on its own. */
  async forDeployment(command: { workspaceId: string; deploymentId: string; version: number; dryRun: boolean; actor: ActorRef }): Promise<{ deploymentId: string; results: RunMigrationResult[] }> {
    const target = await this.target(command.workspaceId, command.deploymentId, command.version);
    const results: RunMigrationResult[] = [];
    let cursor: string | null = null;
    do {
      const listed: { items: Array<{ id: string }>; nextCursor: string | null } = await this.commands.request(IntakeCommands.listRuns, {
        workspaceId: command.workspaceId,
        deploymentId: command.deploymentId,
        state: 'waiting',
        cursor,
        limit: 200,
      });
      for (const run of listed.items) {
        const one = { ...command, runId: run.id };
        try {
          results.push(await this.migrate(one, target));
        } catch (error) {
          // A run that moved on (or is being driven) since it was listed is reported, not fatal to the others.
          if (!(error instanceof MigrationError) || error.code === MigrationErrorCodes.runNotFound) throw error;
          const pin = (await this.read(one)).pin!;
          const from = { version: pin.version, digest: pin.digest, effectiveDigest: pin.effectiveDigest };
          results.push({ runId: run.id, outcome: 'refused', from, to: target, decisionsCompared: 0, divergence: null, refusal: error.message });
        }
      }
      cursor = listed.nextCursor;
    } while (cursor);
    return { deploymentId: command.deploymentId, results };
  }

  private async read(command: { workspaceId: string; runId: string }): Promise<RunAggregate> {
    const events = await readRunHistory(this.store, this.registry, this.payloads, command, 1);
    if (events.length === 0 || events[0]!.workspaceId !== command.workspaceId) throw new MigrationError(MigrationErrorCodes.runNotFound, `no run ${command.runId} in this workspace`);
    return foldRun(command.runId, command.workspaceId, events);
  }

  /** The version the deployment pins now: the only one its runs may move to (policy has compiled its grants). */
  private async target(workspaceId: string, deploymentId: string, version: number): Promise<{ version: number; digest: string; effectiveDigest: string }> {
    const deployment = await this.commands.request(IntakeCommands.getDeployment, { workspaceId, deploymentId });
    if (deployment.version !== version) {
      throw new MigrationError(MigrationErrorCodes.versionNotDeployed, `deployment ${deployment.id} pins version ${deployment.version}; move it to version ${version} (rollback) before migrating its runs`);
    }
    return { version: deployment.version, digest: deployment.digest, effectiveDigest: deployment.effectiveDigest };
  }

  private async migrate(command: MigrateRun, to: { version: number; digest: string; effectiveDigest: string }): Promise<RunMigrationResult> {
    const claim = await this.claims.claim(command.runId, command.workspaceId, this.options.replicaId);
    if (claim.kind === 'held') throw new MigrationError(MigrationErrorCodes.runBusy, `run ${command.runId} is being driven by ${claim.holder}; try again when it waits`);
    if (claim.kind === 'finished') throw new MigrationError(MigrationErrorCodes.runNotWaiting, `run ${command.runId} is ${claim.status}`);
    let state: RunAggregate | null = null;
    try {
      const events = await readRunHistory(this.store, this.registry, this.payloads, command, 1);
      state = foldRun(command.runId, command.workspaceId, events);
      return await this.compareAndMove(command, events, state, to);
    } finally {
      const waiting = state?.status === 'waiting';
      await this.claims.release(command.runId, this.options.replicaId, waiting ? 'waiting' : 'active', { waitingOn: waiting ? (state?.waiting?.attentionId ?? null) : null });
    }
  }

  private async compareAndMove(command: MigrateRun, events: DecodedEvent[], state: RunAggregate, to: { version: number; digest: string; effectiveDigest: string }): Promise<RunMigrationResult> {
    if (state.status !== 'waiting') throw new MigrationError(MigrationErrorCodes.runNotWaiting, `run ${command.runId} is ${state.status}; only a waiting run can move to another version`);
    const pin = state.pin!;
    const from = { version: pin.version, digest: pin.digest, effectiveDigest: pin.effectiveDigest };
    const base = { runId: command.runId, from, to };
    if (to.effectiveDigest === from.effectiveDigest) {
      return { ...base, outcome: 'refused', decisionsCompared: 0, divergence: null, refusal: `the run already runs the effective definition ${to.effectiveDigest}` };
    }
    const [current, proposed] = await Promise.all([this.pinning.pin(state), this.pinning.pin(state, { ...pin, ...to })]);
    const replay = shadowReplay(command.runId, command.workspaceId, events, current.pinned, proposed.pinned, new Date());
    const compared = { ...base, decisionsCompared: replay.decisionsCompared, divergence: replay.divergence, refusal: null };
    if (replay.divergence) return { ...compared, outcome: 'refused' };
    if (command.dryRun) return { ...compared, outcome: 'would_migrate' };
    const data: RunExecutionEventData<'run.migrated'> = { from, to, decisionsCompared: replay.decisionsCompared, by: command.actor };
    await this.store.append(runStreamId(command.runId), state.version, [{ type: 'run.migrated', data, actor: SUPERVISOR_ACTOR }], { workspaceId: command.workspaceId });
    return { ...compared, outcome: 'migrated' };
  }
}
