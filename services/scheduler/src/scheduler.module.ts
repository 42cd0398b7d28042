import { Module, type DynamicModule } from '@nestjs/common';
import { EVENT_REGISTRY } from '@packetagent/bus';
import { registerIntakeEvents, registerSchedulerEvents, type EventRegistry } from '@packetagent/contracts';
import { SchedulerEngine } from './engine/scheduler-engine';
import { resolveSchedulerOptions, SCHEDULER_OPTIONS, type SchedulerModuleOptions } from './scheduler.options';
import { DeploymentEventsConsumer } from './schedules/deployment-events.consumer';
import { ApplyDeploymentEvent } from './schedules/usecases/apply-deployment-event/apply-deployment-event';
import { FireDueSchedules } from './schedules/usecases/fire-due-schedules/fire-due-schedules';
import { TimerCommandsHandler } from './timers/timer-commands.handler';
import { CancelTimer } from './timers/usecases/cancel-timer/cancel-timer';
import { FireDueTimers } from './timers/usecases/fire-due-timers/fire-due-timers';
import { GetTimer } from './timers/usecases/get-timer/get-timer';
import { SetTimer } from './timers/usecases/set-timer/set-timer';

const SCHEDULER_EVENT_SCHEMAS = Symbol('SCHEDULER_EVENT_SCHEMAS');

/**
 * Cron triggers and durable timers. Needs the global providers of BusModule (NATS connection,
 * topology, event registry, CommandBus) and EventStoreModule (PG_POOL, PostgresEventStore).
 */
@Module({})
export class SchedulerModule {
  static forRoot(options: SchedulerModuleOptions = {}): DynamicModule {
    return {
      module: SchedulerModule,
      providers: [
        { provide: SCHEDULER_OPTIONS, useValue: resolveSchedulerOptions(options) },
        {
          // The deployment events it consumes and the timer events it appends must decode and
          // validate in this process, whatever else the shared registry holds.
          provide: SCHEDULER_EVENT_SCHEMAS,
          useFactory: (registry: EventRegistry) => registerSchedulerEvents(registerIntakeEvents(registry)),
          inject: [EVENT_REGISTRY],
        },
        ApplyDeploymentEvent,
        DeploymentEventsConsumer,
        SetTimer,
        CancelTimer,
        GetTimer,
        TimerCommandsHandler,
        FireDueSchedules,
        FireDueTimers,
        SchedulerEngine,
      ],
      exports: [SchedulerEngine],
    };
  }
}
