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
 * Operator pause and resume of one run: recorded as events naming the actor, for the
 * supervisor to honour between steps. Asking for the state a run is already in records
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
      // While only intake has written to the run, the append is fenced at the version it knows
      // and that version moves on. Once another writer (the supervisor) has appended, the request
      // goes after whatever it wrote and intake's known version stays behind, so a later stop
      // still sees that the run may have started.
      const known = Number(run.stream_version);
      const onlyIntakeWrote = (await this.store.streamVersion(Streams.run(run.id))) === known;
      const appended = await this.store.append(
        Streams.run(run.id),
        onlyIntakeWrote ? known : 'any',
        [
          command.pause
            ? { type: 'run.pause_requested', data: { reason: command.reason }, actor: command.actor }
            : { type: 'run.resume_requested', data: {}, actor: command.actor },
        ],
        { workspaceId: command.workspaceId, client },
      );
      const updated = await client.query<RunRow>(
        `UPDATE intake.runs SET pause_requested = $2, stream_version = $3, updated_at = now() WHERE id = $1 RETURNING *`,
        [run.id, command.pause, onlyIntakeWrote ? appended.streamVersion : known],
      );
      return runView(updated.rows[0]!);
    });
  }
}
