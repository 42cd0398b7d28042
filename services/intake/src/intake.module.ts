import { Module, type DynamicModule } from '@nestjs/common';
import { EVENT_REGISTRY } from '@packetagent/bus';
import { registerIntakeEvents, registerRunExecutionEvents, type EventRegistry } from '@packetagent/contracts';
import { IngestAlertsUseCase } from './alerts/ingest-alerts';
import { ControlDeploymentUseCase } from './deployments/usecases/control-deployment';
import { CreateDeploymentUseCase } from './deployments/usecases/create-deployment';
import { EffectiveDefinitionStore } from './deployments/effective-definition-store';
import { ReadDeploymentsUseCase } from './deployments/usecases/read-deployments';
import { IntakeCommandHandlers } from './intake.handlers';
import { QueueTriggerConsumer } from './queue/queue-trigger.consumer';
import { INTAKE_LIMITS, RunAdmission, type IntakeLimits } from './runs/run-admission';
import { ActivateUseCase } from './runs/usecases/activate';
import { ReadRunsUseCase } from './runs/usecases/read-runs';
import { PauseRunUseCase } from './runs/usecases/pause-run';
import { RecordRunProgressUseCase } from './runs/usecases/record-run-progress';
import { RunProgressConsumer } from './runs/run-progress.consumer';
import { StopRunUseCase } from './runs/usecases/stop-run';
import { DeliverWebhookUseCase } from './webhooks/deliver-webhook';
import { ApplyDefinitionUseCase } from './workers/usecases/apply-definition';
import { CreateVersionUseCase } from './workers/usecases/create-version';
import { CreateWorkerUseCase } from './workers/usecases/create-worker';
import { PinMcpTools } from './workers/usecases/pin-mcp-tools';
import { ReadWorkersUseCase } from './workers/usecases/read-workers';

const INTAKE_EVENT_SCHEMAS = Symbol('INTAKE_EVENT_SCHEMAS');

export type IntakeOptions = Partial<IntakeLimits>;

/**
 * Workers, versions, deployments, activations and run admission. It needs the event store
 * (EventStoreModule) and the bus (BusModule) from the application, and answers its commands
 * over NATS, so the gateway and the scheduler reach it the same way in one process or many.
 */
@Module({})
export class IntakeModule {
  static forRoot(options: IntakeOptions = {}): DynamicModule {
    const limits: IntakeLimits = { inlineInputBytes: 16 * 1024, maxInputBytes: 256 * 1024, ...options };
    return {
      module: IntakeModule,
      providers: [
        { provide: INTAKE_LIMITS, useValue: limits },
        {
          // What it appends, and the supervisor's run events it follows, must decode here.
          provide: INTAKE_EVENT_SCHEMAS,
          useFactory: (registry: EventRegistry) => registerRunExecutionEvents(registerIntakeEvents(registry)),
          inject: [EVENT_REGISTRY],
        },
        RunAdmission,
        CreateWorkerUseCase,
        PinMcpTools,
        CreateVersionUseCase,
        ApplyDefinitionUseCase,
        ReadWorkersUseCase,
        CreateDeploymentUseCase,
        EffectiveDefinitionStore,
        ControlDeploymentUseCase,
        ReadDeploymentsUseCase,
        ActivateUseCase,
        DeliverWebhookUseCase,
        IngestAlertsUseCase,
        ReadRunsUseCase,
        StopRunUseCase,
        PauseRunUseCase,
        QueueTriggerConsumer,
        RecordRunProgressUseCase,
        RunProgressConsumer,
        IntakeCommandHandlers,
      ],
    };
  }
}
