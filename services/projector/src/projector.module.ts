import { Module, type DynamicModule } from '@nestjs/common';
import { EVENT_REGISTRY } from '@packetagent/bus';
import type { EventRegistry } from '@packetagent/contracts';
import { registerProjectorEvents } from '@packetagent/projections';
import { ReadOverview } from './overview/usecases/read-overview/read-overview';
import { ProjectionConsumer } from './projection/projection.consumer';
import { ProjectEvent } from './projection/usecases/project-event/project-event';
import { PROJECTOR_OPTIONS, resolveProjectorOptions, type ProjectorModuleOptions } from './projector.options';
import { ProjectorCommandsHandler } from './projector-commands.handler';
import { ReadRunSummary } from './runs/usecases/read-run-summary/read-run-summary';

const PROJECTOR_EVENT_SCHEMAS = Symbol('PROJECTOR_EVENT_SCHEMAS');

/**
 * The operations read model: one ordered consumer of every event keeps the projections in
 * schema `projector`, and `projector.overview` / `projector.runs.summary` answer from them.
 * Needs the global providers of BusModule and EventStoreModule.
 */
@Module({})
export class ProjectorModule {
  static forRoot(options: ProjectorModuleOptions = {}): DynamicModule {
    return {
      module: ProjectorModule,
      providers: [
        { provide: PROJECTOR_OPTIONS, useValue: resolveProjectorOptions(options) },
        {
          // Every context's events must decode here: only what no schema describes is a gap.
          provide: PROJECTOR_EVENT_SCHEMAS,
          useFactory: (registry: EventRegistry) => registerProjectorEvents(registry),
          inject: [EVENT_REGISTRY],
        },
        ProjectEvent,
        ProjectionConsumer,
        ReadOverview,
        ReadRunSummary,
        ProjectorCommandsHandler,
      ],
    };
  }
}
