import { Injectable } from '@nestjs/common';
import { isTerminal, runIdFromStream, runStateAfter, TERMINAL_RUN_STATES, type DecodedEvent, type RunExecutionEventData } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { releasableRuns } from '../admission.decider';
import { RunAdmission } from '../run-admission';
import { lockDeployment, type DeploymentRow } from '../../deployments/deployment.rows';
import type { RunRow } from '../run.rows';

const INTAKE = { kind: 'service', id: 'intake' } as const;

/**
 * Follows the supervisor's events on a run: the run's state and version for reads, and on a
 * terminal event the concurrency slot it held, which goes to the oldest held run of its
 * deployment. A run already terminal stays as it is, so a redelivered or late event changes
 * nothing.
 */
@Injectable()
export class RecordRunProgressUseCase {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly admission: RunAdmission,
  ) {}

  async execute(event: DecodedEvent): Promise<void> {
    if (event.type === 'run.migrated') return this.recordMigration(event);
    const state = runStateAfter(event.type);
    const runId = runIdFromStream(event.stream);
    if (!state || runId === null) return;
    await this.store.transaction(async (client) => {
      const found = await client.query<{ deployment_id: string; state: RunRow['state'] }>(
        'SELECT deployment_id, state FROM intake.runs WHERE id = $1 AND workspace_id = $2',
        [runId, event.workspaceId],
      );
      const current = found.rows[0];
      if (!current || isTerminal(current.state) || current.state === state) return;
      // Deployment first, then run: the lock order every admission path uses.
      const deployment = (await client.query<DeploymentRow>(lockDeployment, [current.deployment_id, event.workspaceId])).rows[0]!;
      const { rows } = await client.query<RunRow>(
        `UPDATE intake.runs SET state = $2, updated_at = now() WHERE id = $1 AND state <> ALL($3::text[]) RETURNING *`,
        [runId, state, TERMINAL_RUN_STATES],
      );
      const run = rows[0];
      if (!run || !isTerminal(state) || run.hold !== null) return;
      const counts = await client.query<DeploymentRow>(
        'UPDATE intake.deployments SET active_runs = GREATEST(active_runs - 1, 0), updated_at = now() WHERE id = $1 RETURNING *',
        [deployment.id],
      );
      const after = counts.rows[0]!;
      if (after.status !== 'active') return;
      const free = releasableRuns({ activeRuns: after.active_runs, heldRuns: after.held_runs, maxConcurrentRuns: after.max_concurrent_runs });
      if (free > 0) await this.admission.releaseHeld(client, after, free, INTAKE);
    });
  }

  /**
   * The run goes on under another version of its worker, so reads show that one: the version of
   * the run's latest migration as stored, so a redelivered earlier one (after a later move, even
   * back to where it came from) changes nothing.
   */
  private async recordMigration(event: DecodedEvent): Promise<void> {
    const runId = runIdFromStream(event.stream);
    if (runId === null) return;
    await this.store.transaction(async (client) => {
      const latest = await client.query<{ data: RunExecutionEventData<'run.migrated'> }>(
        `SELECT data FROM events WHERE stream_id = $1 AND workspace_id = $2 AND type = 'run.migrated' ORDER BY stream_version DESC LIMIT 1`,
        [event.stream, event.workspaceId],
      );
      const { to } = latest.rows[0]?.data ?? (event.data as RunExecutionEventData<'run.migrated'>);
      await client.query('UPDATE intake.runs SET version = $3, digest = $4, updated_at = now() WHERE id = $1 AND workspace_id = $2 AND (version <> $3 OR digest <> $4)', [
        runId,
        event.workspaceId,
        to.version,
        to.digest,
      ]);
    });
  }
}
