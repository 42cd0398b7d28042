import { Injectable } from '@nestjs/common';
import { OnCommand } from '@packetagent/bus';
import { ProjectorCommands } from '@packetagent/contracts';
import { ReadOverview, type ReadOverviewRequest, type ReadOverviewResult } from './overview/usecases/read-overview/read-overview';
import { ReadRunSummary, type ReadRunSummaryRequest, type ReadRunSummaryResult } from './runs/usecases/read-run-summary/read-run-summary';

/** `projector.*` over NATS request/reply, served by every replica. */
@Injectable()
export class ProjectorCommandsHandler {
  constructor(
    private readonly readOverview: ReadOverview,
    private readonly readRunSummary: ReadRunSummary,
  ) {}

  @OnCommand(ProjectorCommands.overview)
  overview(request: ReadOverviewRequest): Promise<ReadOverviewResult> {
    return this.readOverview.execute(request);
  }

  @OnCommand(ProjectorCommands.runSummary)
  runSummary(request: ReadRunSummaryRequest): Promise<ReadRunSummaryResult> {
    return this.readRunSummary.execute(request);
  }
}
