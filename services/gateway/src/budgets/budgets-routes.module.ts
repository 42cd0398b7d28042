import { Module } from '@nestjs/common';
import { BudgetsController } from './budgets.controller';

/** Budget inspection and review; forwards to the budget service over NATS. */
@Module({ controllers: [BudgetsController] })
export class BudgetsRoutesModule {}
