import { Injectable } from '@nestjs/common';
import { runCareStream, type ActorRef, type EndRunResult, type RunCareEventData, type RunExecutionEventData } from '@packetagent/contracts';
import { ConcurrencyError, PostgresEventStore } from '@packetagent/eventstore';
import { headVersion, lockQuarantined, runStream, supervisionView } from '../../supervision.rows';

export interface EndRunCommand {
  workspaceId: string;
  runId: string;
  actor: ActorRef;
  reason: string;
}

const ATTEMPTS = 3;

/**
 * Ends a quarantined run: `run.abandoned` (cause `quarantined`, with the person's reason) at
 * the head of the run's stream, without folding the history that could not be replayed. The
 * lease row is locked for the transaction, so no replica can claim the run meanwhile; the
 * person is the event's actor, and the end is recorded on `runcare-<run>` as well.
 */
@Injectable()
export class EndRun {
  constructor(private readonly store: PostgresEventStore) {}

  async execute(command: EndRunCommand): Promise<EndRunResult> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(command);
      } catch (error) {
        // Someone appended to the stream between reading its head and appending: read it again.
        if (!(error instanceof ConcurrencyError) || attempt >= ATTEMPTS) throw error;
      }
    }
  }

  private attempt(command: EndRunCommand): Promise<EndRunResult> {
    const { runId, workspaceId, actor } = command;
    return this.store.transaction(async (client) => {
      const row = await lockQuarantined(client, runId, workspaceId);
      const head = await headVersion(client, runId);
      const abandoned: RunExecutionEventData<'run.abandoned'> = {
        cause: 'quarantined',
        detail: `ended by ${actor.kind} ${actor.id} while quarantined: ${command.reason}`.slice(0, 2_000),
        effect: null,
        attentionId: null,
      };
      const appended = await this.store.append(runStream(runId), head, [{ type: 'run.abandoned', data: abandoned, actor }], { workspaceId, client });
      const ended: RunCareEventData<'quarantine.ended'> = { runId, reason: command.reason, quarantineReason: row.quarantine_reason, abandonedAtVersion: appended.streamVersion };
      await this.store.append(runCareStream(runId), 'any', [{ type: 'quarantine.ended', data: ended, actor }], { workspaceId, client });
      const { rows } = await client.query<typeof row>(
        `UPDATE supervisor.runs SET status = 'terminal', updated_at = now() WHERE run_id = $1
         RETURNING run_id, workspace_id, status, quarantine_reason, waiting_on, claims, updated_at`,
        [runId],
      );
      return { ...supervisionView(rows[0]!), endedAtVersion: appended.streamVersion };
    });
  }
}
