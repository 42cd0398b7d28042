import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { z } from 'zod';
import type { SchedulerCommands, TimerView } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import { TimerNotFoundError } from '../../timer.errors';
import { readTimer, toView } from '../../timer.rows';

export type GetTimerRequest = z.output<typeof SchedulerCommands.getTimer.request>;

/** A timer of the caller's workspace; another workspace's timer is not found. */
@Injectable()
export class GetTimer {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async execute(request: GetTimerRequest): Promise<TimerView> {
    const timer = await readTimer(this.pool, request.timerId);
    if (!timer || timer.workspaceId !== request.workspaceId) throw new TimerNotFoundError(request.timerId);
    return toView(timer);
  }
}
