import { Inject, Injectable } from '@nestjs/common';
import { runCareStream, type ActorRef, type ReleaseRunResult, type RunCareEventData } from '@packetagent/contracts';
import { PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import type { Pool } from 'pg';
import { SupervisorEngine } from '../../../../engine/supervisor-engine';
import { SUPERVISOR_OPTIONS, type SupervisorOptions } from '../../../../supervisor.options';
import { headVersion, lockQuarantined, readSupervision, supervisionView } from '../../supervision.rows';

export interface ReleaseRunCommand {
  workspaceId: string;
  runId: string;
  actor: ActorRef;
}

/** How long the answer waits to see the released run replayed (or quarantined again), in milliseconds. */
const OBSERVE_MS = 3_000;
const OBSERVE_EVERY_MS = 50;

/**
 * Clears a run's quarantine and drives it again. The supervisor replays the whole history as it
 * does on every claim: if it still cannot, the run is quarantined again with the reason (which
 * the answer carries). The release is recorded on `runcare-<run>` with the person who asked.
 */
@Injectable()
export class ReleaseRun {
  constructor(
    private readonly store: PostgresEventStore,
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly engine: SupervisorEngine,
    @Inject(SUPERVISOR_OPTIONS) private readonly options: SupervisorOptions,
  ) {}

  async execute(command: ReleaseRunCommand): Promise<ReleaseRunResult> {
    const before = await this.store.transaction(async (client) => {
      const row = await lockQuarantined(client, command.runId, command.workspaceId);
      const version = await headVersion(client, command.runId);
      // holder, lease and status as a run no one drives yet: the next claim (this replica's
      // wake below, or any replica's recovery sweep) takes it.
      await client.query(
        `UPDATE supervisor.runs SET status = 'active', holder = NULL, lease_until = NULL, quarantine_reason = NULL, waiting_on = NULL, updated_at = now()
          WHERE run_id = $1`,
        [command.runId],
      );
      const data: RunCareEventData<'quarantine.released'> = { runId: command.runId, quarantineReason: row.quarantine_reason };
      await this.store.append(runCareStream(command.runId), 'any', [{ type: 'quarantine.released', data, actor: command.actor }], { workspaceId: command.workspaceId, client });
      return { claims: row.claims, version };
    });
    this.options.log('info', 'quarantined run released', { runId: command.runId, actor: `${command.actor.kind}:${command.actor.id}` });
    this.engine.wake(command.runId, command.workspaceId).catch((error: unknown) => {
      this.options.log('warn', 'released run could not be woken here; the recovery sweep takes it', { runId: command.runId, error: error instanceof Error ? error.message : String(error) });
    });
    return this.observe(command, before);
  }

  /** A claim after the release that quarantined the run again, or that got past the replay (it appended, parked or ended). */
  private async observe(command: ReleaseRunCommand, before: { claims: number; version: number }): Promise<ReleaseRunResult> {
    const deadline = Date.now() + OBSERVE_MS;
    for (;;) {
      const row = (await readSupervision(this.pool, command.runId, command.workspaceId))!;
      const claimed = row.claims > before.claims;
      if (claimed && row.status === 'quarantined') return { ...supervisionView(row), outcome: 'quarantined' };
      if (claimed && (row.status !== 'active' || (await headVersion(this.pool, command.runId)) > before.version)) return { ...supervisionView(row), outcome: 'resumed' };
      if (Date.now() >= deadline) return { ...supervisionView(row), outcome: 'pending' };
      await new Promise((resolve) => setTimeout(resolve, OBSERVE_EVERY_MS));
    }
  }
}
