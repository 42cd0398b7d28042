export { SupervisorModule } from './supervisor.module';
export { SupervisorEngine, type SupervisorStatus } from './engine/supervisor-engine';
export { StuckRunWatchdog, type WatchdogStatus } from './watchdog/stuck-run-watchdog';
export { FINDING_CAUSES, type FindingCause } from './watchdog/watchdog.plan';
export type { SupervisorModuleOptions } from './supervisor.options';
export { foldRun, evolveRun, stateDigest, UnreplayableRunError, type RunAggregate } from './run/run.state';
export type { FaultPort } from './execution/ports';
export { decide, afterDecision, afterModelTurn } from './run/run.decider';
