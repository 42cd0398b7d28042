import { Module, type DynamicModule } from '@nestjs/common';
import { EVENT_REGISTRY } from '@packetagent/bus';
import { registerBudgetEvents, registerIntakeEvents, type EventRegistry } from '@packetagent/contracts';
import { BUDGET_OPTIONS, resolveBudgetOptions, type BudgetModuleOptions } from './budget.options';
import { LimitEventsConsumer } from './limits/limit-events.consumer';
import { ApplyLimitsEvent } from './limits/usecases/apply-limits-event/apply-limits-event';
import { RaiseRunLimit } from './limits/usecases/raise-run-limit/raise-run-limit';
import { BudgetCommandsHandler } from './reservations/budget-commands.handler';
import { ExpirySweeper } from './reservations/expiry-sweeper';
import { ExpireDueReservations } from './reservations/usecases/expire-due/expire-due';
import { ReadUsage } from './reservations/usecases/read-usage/read-usage';
import { Release } from './reservations/usecases/release/release';
import { Reserve } from './reservations/usecases/reserve/reserve';
import { ReviewScope } from './reservations/usecases/review-scope/review-scope';
import { Settle } from './reservations/usecases/settle/settle';

const BUDGET_EVENT_SCHEMAS = Symbol('BUDGET_EVENT_SCHEMAS');

/**
 * The rolling budget ledger: reserve / settle / release / review / usage over NATS, limits
 * projected from deployment and run events, expiry of holds past their TTL. Needs the global
 * providers of BusModule and EventStoreModule.
 */
@Module({})
export class BudgetModule {
  static forRoot(options: BudgetModuleOptions = {}): DynamicModule {
    return {
      module: BudgetModule,
      providers: [
        { provide: BUDGET_OPTIONS, useValue: resolveBudgetOptions(options) },
        {
          // The intake events it consumes and the budget events it appends must decode and
          // validate in this process, whatever else the shared registry holds.
          provide: BUDGET_EVENT_SCHEMAS,
          useFactory: (registry: EventRegistry) => registerBudgetEvents(registerIntakeEvents(registry)),
          inject: [EVENT_REGISTRY],
        },
        ApplyLimitsEvent,
        LimitEventsConsumer,
        Reserve,
        Settle,
        Release,
        ReviewScope,
        ReadUsage,
        RaiseRunLimit,
        ExpireDueReservations,
        BudgetCommandsHandler,
        ExpirySweeper,
      ],
      exports: [ExpirySweeper],
    };
  }
}
