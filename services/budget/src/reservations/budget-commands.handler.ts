import { Injectable } from '@nestjs/common';
import { OnCommand } from '@packetagent/bus';
import { BudgetCommands, type ReserveResult, type RunLimitRaise } from '@packetagent/contracts';
import { RaiseRunLimit, type RaiseRunLimitRequest } from '../limits/usecases/raise-run-limit/raise-run-limit';
import { ReadUsage, type ReadUsageRequest, type ReadUsageResult } from './usecases/read-usage/read-usage';
import { Release, type ReleaseRequest, type ReleaseResult } from './usecases/release/release';
import { Reserve, type ReserveRequest } from './usecases/reserve/reserve';
import { ReviewScope, type ReviewScopeRequest, type ReviewScopeResult } from './usecases/review-scope/review-scope';
import { Settle, type SettleRequest, type SettleResult } from './usecases/settle/settle';

/** `budget.*` over NATS request/reply, served by every replica. */
@Injectable()
export class BudgetCommandsHandler {
  constructor(
    private readonly reserveUseCase: Reserve,
    private readonly settleUseCase: Settle,
    private readonly releaseUseCase: Release,
    private readonly reviewUseCase: ReviewScope,
    private readonly readUsage: ReadUsage,
    private readonly raiseRunLimitUseCase: RaiseRunLimit,
  ) {}

  @OnCommand(BudgetCommands.reserve)
  reserve(request: ReserveRequest): Promise<ReserveResult> {
    return this.reserveUseCase.execute(request);
  }

  @OnCommand(BudgetCommands.settle)
  settle(request: SettleRequest): Promise<SettleResult> {
    return this.settleUseCase.execute(request);
  }

  @OnCommand(BudgetCommands.release)
  release(request: ReleaseRequest): Promise<ReleaseResult> {
    return this.releaseUseCase.execute(request);
  }

  @OnCommand(BudgetCommands.review)
  review(request: ReviewScopeRequest): Promise<ReviewScopeResult> {
    return this.reviewUseCase.execute(request);
  }

  @OnCommand(BudgetCommands.raiseRunLimit)
  raiseRunLimit(request: RaiseRunLimitRequest): Promise<RunLimitRaise> {
    return this.raiseRunLimitUseCase.execute(request);
  }

  @OnCommand(BudgetCommands.usage)
  usage(request: ReadUsageRequest): Promise<ReadUsageResult> {
    return this.readUsage.execute(request);
  }
}
