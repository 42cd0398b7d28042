import { Injectable } from '@nestjs/common';
import { isTerminal, type ActorRef, type RunView } from '@packetagent/contracts';
import { ConcurrencyError, PostgresEventStore } from '@packetagent/eventstore';
import { InvalidTransitionError, NotFoundError } from '../../shared/errors';
import { Streams } from '../../shared/ids';
import { releasableRuns } from '../admission.decider';
import { RunAdmission } from '../run-admission';
import { lockDeployment, type DeploymentRow } from '../../deployments/deployment.rows';
import { runView, type RunRow } from '../run.rows';

export interface StopRun {
  workspaceId: string;
  actor: ActorRef;
  runId: string;
  reason: string | null;
}

/**
 * A run only intake has written to ends as cancelled at once and frees its slot: intake still
 * owns its stream. Once a supervisor has claimed it, the stop is a request in the run's control
 * stream, which the supervisor folds into the run and honours at once (ADR 0017). The cancel is
 * fenced by the run's stream version: if a supervisor claimed the run meanwhile, the cancel
 * loses, the transaction is tried again, and it becomes a request.
 */
@Injectable()
export class StopRunUseCase {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly admission: RunAdmission,
  ) {}

  async execute(command: StopRun): Promise<RunView> {
    try {
      return await this.attempt(command);
    } catch (error) {
      if (!(error instanceof ConcurrencyError)) throw error;
      return this.attempt(command);
    }
  }

  private attempt(command: StopRun): Promise<RunView> {
    return this.store.transaction(async (client) => {
      const found = await client.query<{ deployment_id: string }>('SELECT deployment_id FROM intake.runs WHERE id = $1 AND workspace_id = $2', [
        command.runId,
        command.workspaceId,
      ]);
      if (!found.rows[0]) throw new NotFoundError('run', command.runId);
      // Deployment first, then run: the lock order every admission path uses.
      const deployment = (await client.query<DeploymentRow>(lockDeployment, [found.rows[0].deployment_id, command.workspaceId])).rows[0]!;
      const run = (await client.query<RunRow>('SELECT * FROM intake.runs WHERE id = $1 FOR UPDATE', [command.runId])).rows[0]!;
      // As for pause and resume: asking to stop a finished run is a conflict, not a success that changed nothing.
      if (isTerminal(run.state)) throw new InvalidTransitionError(`run ${run.id} is ${run.state}; it cannot be stopped`);
      if (run.stop_requested) return runView(run);

      const version = Number(run.stream_version);
      const streamVersion = await this.store.streamVersion(Streams.run(run.id));
      const notStarted = run.state === 'queued' && streamVersion === version;
      const reason = command.reason ?? 'stopped by an operator';
      if (!notStarted) {
        await this.store.append(Streams.runControl(run.id), 'any', [{ type: 'run.stop_requested', data: { reason: command.reason }, actor: command.actor }], {
          workspaceId: command.workspaceId,
          client,
        });
        const { rows } = await client.query<RunRow>(
          `UPDATE intake.runs SET stop_requested = true, updated_at = now() WHERE id = $1 RETURNING *`,
          [run.id],
        );
        return runView(rows[0]!);
      }
      const appended = await this.store.append(Streams.run(run.id), version, [{ type: 'run.cancelled', data: { reason }, actor: command.actor }], {
        workspaceId: command.workspaceId,
        client,
      });
      const { rows } = await client.query<RunRow>(
        `UPDATE intake.runs SET state = 'cancelled', hold = NULL, stream_version = $2, updated_at = now() WHERE id = $1 RETURNING *`,
        [run.id, appended.streamVersion],
      );
      const wasHeld = run.hold !== null;
      const counts = await client.query<DeploymentRow>(
        `UPDATE intake.deployments SET active_runs = active_runs - $2, held_runs = held_runs - $3, updated_at = now()
          WHERE id = $1 RETURNING *`,
        [deployment.id, wasHeld ? 0 : 1, wasHeld ? 1 : 0],
      );
      const after = counts.rows[0]!;
      if (!wasHeld && after.status === 'active') {
        const free = releasableRuns({ activeRuns: after.active_runs, heldRuns: after.held_runs, maxConcurrentRuns: after.max_concurrent_runs });
        if (free > 0) await this.admission.releaseHeld(client, after, free, command.actor);
      }
      return runView(rows[0]!);
    });
  }
}
