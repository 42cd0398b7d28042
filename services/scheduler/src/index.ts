export { SchedulerModule } from './scheduler.module';
export { resolveSchedulerOptions, SCHEDULER_OPTIONS, type SchedulerModuleOptions, type ResolvedSchedulerOptions, type SchedulerLog } from './scheduler.options';
export { SchedulerEngine, type SchedulerStatus } from './engine/scheduler-engine';
export { CronSchedule, InvalidCronError } from './cron/cron-schedule';
export { cronDedupeKey } from './schedules/usecases/fire-due-schedules/fire-due-schedules';
export { planTick, type MissedPolicy, type TickPlan, type TickLimits } from './schedules/tick-plan';
