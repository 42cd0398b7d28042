export { SupervisorModule } from './supervisor.module';
export { SupervisorEngine, type SupervisorStatus } from './engine/supervisor-engine';
export type { SupervisorModuleOptions } from './supervisor.options';
export { foldRun, evolveRun, stateDigest, UnreplayableRunError, type RunAggregate } from './run/run.state';
export type { FaultPort } from './execution/ports';
export { decide, afterDecision, afterModelTurn } from './run/run.decider';
