import { Module, type DynamicModule } from '@nestjs/common';
import { CommandBus, EVENT_REGISTRY } from '@packetagent/bus';
import { registerIntakeEvents, registerPolicyEvents, registerRunCareEvents, registerRunExecutionEvents, registerSchedulerEvents, type EventRegistry } from '@packetagent/contracts';
import { envProviderKeys, ProviderRouter, providerConfigFromEnv } from '@packetagent/providers';
import { ToolRegistry, toolsConfig } from '@packetagent/tools';
import { RunClaims } from './claims/run-claims';
import { BusMcp } from './execution/adapters/bus-mcp';
import { BusSandbox } from './execution/adapters/bus-sandbox';
import { SupervisorEngine } from './engine/supervisor-engine';
import { WakeConsumer } from './engine/wake.consumer';
import { RunDefinitions } from './execution/run-definitions';
import { RunPinning } from './engine/run-pinning';
import { MigrateRunUseCase } from './migration/migrate-run';
import { MigrationCommandHandlers } from './migration/migration.handlers';
import { CheckModelProviders } from './models/check-model-providers';
import { DraftWorkerDefinition } from './models/draft-worker';
import { SupervisorModelCommandHandlers } from './models/models.handlers';
import { ReadSupervision } from './watchdog/quarantine/usecases/read-supervision/read-supervision';
import { ReleaseRun } from './watchdog/quarantine/usecases/release-run/release-run';
import { EndRun } from './watchdog/quarantine/usecases/end-run/end-run';
import { SupervisorCommandHandlers } from './watchdog/quarantine/supervisor.handlers';
import { StuckRunWatchdog } from './watchdog/stuck-run-watchdog';
import { PROVIDER_ROUTER, resolveSupervisorOptions, SUPERVISOR_OPTIONS, TOOL_REGISTRY, type SupervisorModuleOptions } from './supervisor.options';

const SUPERVISOR_EVENT_SCHEMAS = Symbol('SUPERVISOR_EVENT_SCHEMAS');

/**
 * Drives admitted runs. Needs the global providers of BusModule and EventStoreModule; reaches
 * intake, policy, budget, vault and the scheduler only through their commands and events.
 */
@Module({})
export class SupervisorModule {
  static forRoot(options: SupervisorModuleOptions = {}): DynamicModule {
    const resolved = resolveSupervisorOptions(options);
    return {
      module: SupervisorModule,
      providers: [
        { provide: SUPERVISOR_OPTIONS, useValue: resolved },
        {
          // The run events it folds and appends, and the answers and timers that wake runs.
          provide: SUPERVISOR_EVENT_SCHEMAS,
          useFactory: (registry: EventRegistry) => registerRunCareEvents(registerRunExecutionEvents(registerSchedulerEvents(registerPolicyEvents(registerIntakeEvents(registry))))),
          inject: [EVENT_REGISTRY],
        },
        {
          provide: PROVIDER_ROUTER,
          useFactory: () => {
            if (options.router) return options.router;
            const env = options.providerEnv ?? process.env;
            return new ProviderRouter({ config: providerConfigFromEnv(env), keys: envProviderKeys(env) });
          },
        },
        {
          provide: TOOL_REGISTRY,
          useFactory: (commands: CommandBus) => options.registry ?? new ToolRegistry({ config: toolsConfig(resolved.tools), sandbox: new BusSandbox(commands), mcp: new BusMcp(commands) }),
          inject: [CommandBus],
        },
        RunClaims,
        RunDefinitions,
        RunPinning,
        MigrateRunUseCase,
        MigrationCommandHandlers,
        SupervisorEngine,
        WakeConsumer,
        StuckRunWatchdog,
        ReadSupervision,
        ReleaseRun,
        EndRun,
        SupervisorCommandHandlers,
        CheckModelProviders,
        DraftWorkerDefinition,
        SupervisorModelCommandHandlers,
      ],
      exports: [SupervisorEngine, StuckRunWatchdog],
    };
  }
}
