import { Injectable } from '@nestjs/common';
import { OnCommand } from '@packetagent/bus';
import { SchedulerCommands, type TimerView } from '@packetagent/contracts';
import { CancelTimer, type CancelTimerRequest, type CancelTimerResult } from './usecases/cancel-timer/cancel-timer';
import { GetTimer, type GetTimerRequest } from './usecases/get-timer/get-timer';
import { SetTimer, type SetTimerRequest, type SetTimerResult } from './usecases/set-timer/set-timer';

/** `scheduler.timers.*` over NATS request/reply, served by every replica. */
@Injectable()
export class TimerCommandsHandler {
  constructor(
    private readonly setTimer: SetTimer,
    private readonly cancelTimer: CancelTimer,
    private readonly getTimer: GetTimer,
  ) {}

  @OnCommand(SchedulerCommands.setTimer)
  set(request: SetTimerRequest): Promise<SetTimerResult> {
    return this.setTimer.execute(request);
  }

  @OnCommand(SchedulerCommands.cancelTimer)
  cancel(request: CancelTimerRequest): Promise<CancelTimerResult> {
    return this.cancelTimer.execute(request);
  }

  @OnCommand(SchedulerCommands.getTimer)
  get(request: GetTimerRequest): Promise<TimerView> {
    return this.getTimer.execute(request);
  }
}
