import { Injectable } from '@nestjs/common';
import type { z } from 'zod';
import { OnCommand } from '@packetagent/bus';
import { SupervisorCommands, type EndRunResult, type ReleaseRunResult, type RunSupervision } from '@packetagent/contracts';
import { EndRun } from './usecases/end-run/end-run';
import { ReadSupervision } from './usecases/read-supervision/read-supervision';
import { ReleaseRun } from './usecases/release-run/release-run';

type Req<K extends keyof typeof SupervisorCommands> = z.output<(typeof SupervisorCommands)[K]['request']>;

/** `supervisor.runs.*` over NATS request/reply, served by every supervisor replica. */
@Injectable()
export class SupervisorCommandHandlers {
  constructor(
    private readonly readSupervision: ReadSupervision,
    private readonly releaseRun: ReleaseRun,
    private readonly endRun: EndRun,
  ) {}

  @OnCommand(SupervisorCommands.getRun)
  get(request: Req<'getRun'>): Promise<RunSupervision> {
    return this.readSupervision.execute(request.workspaceId, request.runId);
  }

  @OnCommand(SupervisorCommands.releaseRun)
  release(request: Req<'releaseRun'>): Promise<ReleaseRunResult> {
    return this.releaseRun.execute(request);
  }

  @OnCommand(SupervisorCommands.endRun)
  end(request: Req<'endRun'>): Promise<EndRunResult> {
    return this.endRun.execute(request);
  }
}
