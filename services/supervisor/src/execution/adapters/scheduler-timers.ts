import type { CommandBus } from '@packetagent/bus';
import { RUN_WALL_TIME_PURPOSE, SchedulerCommands } from '@packetagent/contracts';
import type { TimersPort } from '../ports';
import { withRetries } from '../retry';
import { SUPERVISOR_ACTOR } from '../supervisor-actor';

/** The scheduler's durable timer that wakes a parked run at its wall-time limit. */
export class SchedulerTimers implements TimersPort {
  constructor(
    private readonly commands: CommandBus,
    private readonly run: { runId: string; workspaceId: string },
  ) {}

  private get timerId(): string {
    return `run-wall-${this.run.runId}`;
  }

  async setWallTimer(deadline: string): Promise<void> {
    await withRetries(
      () =>
        this.commands.request(SchedulerCommands.setTimer, {
          workspaceId: this.run.workspaceId,
          timerId: this.timerId,
          purpose: RUN_WALL_TIME_PURPOSE,
          dueAt: deadline,
          payload: { runId: this.run.runId },
          actor: SUPERVISOR_ACTOR,
        }),
      new AbortController().signal,
    );
  }

  async cancelWallTimer(): Promise<void> {
    await this.commands.request(SchedulerCommands.cancelTimer, { workspaceId: this.run.workspaceId, timerId: this.timerId, reason: 'run ended', actor: SUPERVISOR_ACTOR });
  }
}
