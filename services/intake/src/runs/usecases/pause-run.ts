import { Injectable } from '@nestjs/common';
import { isTerminal, type ActorRef, type RunView } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { InvalidTransitionError, NotFoundError } from '../../shared/errors';
import { Streams } from '../../shared/ids';
import { runView, type RunRow } from '../run.rows';

export interface PauseOrResumeRun {
  workspaceId: string;
  actor: ActorRef;
  runId: string;
  pause: boolean;
  reason: string | null;
}

/**
 * Operator pause and resume of one run: recorded as requests naming the actor, for the
 * supervisor to honour. Asking for the state a run is already in records
 * nothing; a finished run cannot be paused or resumed.
 */
@Injectable()
export class PauseRunUseCase {
  constructor(private readonly store: PostgresEventStore) {}

  async execute(command: PauseOrResumeRun): Promise<RunView> {
    return this.store.transaction(async (client) => {
      const { rows } = await client.query<RunRow>('SELECT * FROM intake.runs WHERE id = $1 AND workspace_id = $2 FOR UPDATE', [
        command.runId,
        command.workspaceId,
      ]);
      const run = rows[0];
      if (!run) throw new NotFoundError('run', command.runId);
      if (isTerminal(run.state)) throw new InvalidTransitionError(`run ${run.id} is ${run.state}; it cannot be ${command.pause ? 'paused' : 'resumed'}`);
      if (run.pause_requested === command.pause) return runView(run);
      // Requests go to the run's control stream whoever owns the run's own stream: the supervisor
      // folds them when it claims the run, or at once if it holds it (ADR 0017).
      await this.store.append(
        Streams.runControl(run.id),
        'any',
        [
          command.pause
            ? { type: 'run.pause_requested', data: { reason: command.reason }, actor: command.actor }
            : { type: 'run.resume_requested', data: {}, actor: command.actor },
        ],
        { workspaceId: command.workspaceId, client },
      );
      const updated = await client.query<RunRow>(`UPDATE intake.runs SET pause_requested = $2, updated_at = now() WHERE id = $1 RETURNING *`, [run.id, command.pause]);
      return runView(updated.rows[0]!);
    });
  }
}
