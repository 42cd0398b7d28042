export { ProjectorModule } from './projector.module';
export { resolveProjectorOptions, PROJECTOR_OPTIONS, type ProjectorModuleOptions, type ResolvedProjectorOptions, type ProjectorLog } from './projector.options';
export { ProjectionConsumer, PROJECTOR_DURABLE } from './projection/projection.consumer';
export { ProjectEvent, type ProjectOutcome } from './projection/usecases/project-event/project-event';
export { ReadOverview } from './overview/usecases/read-overview/read-overview';
export { ReadRunSummary } from './runs/usecases/read-run-summary/read-run-summary';
export { RunNotFoundError } from './shared/errors';
