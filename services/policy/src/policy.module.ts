import { Module, type DynamicModule } from '@nestjs/common';
import { EVENT_REGISTRY } from '@packetagent/bus';
import { registerIntakeEvents, registerPolicyEvents, registerRunExecutionEvents, registerSchedulerEvents, type EventRegistry } from '@packetagent/contracts';
import { DeadlineTimersConsumer } from './attention/deadline-timers.consumer';
import { ReconnectedCredentialsConsumer } from './attention/reconnected-credentials.consumer';
import { AnswerAttention } from './attention/usecases/answer-attention';
import { CheckEdit } from './attention/usecases/check-edit';
import { RaiseAttention } from './attention/usecases/raise-attention';
import { ReadAttention } from './attention/usecases/read-attention';
import { Authorize } from './authorize/authorize';
import { ReadComputer } from './computers/read-computer';
import { GrantComputerKey } from './computers/usecases/grant-computer-key';
import { GrantRouteCredential } from './notifications/grant-route-credential';
import { ApplyDeploymentEvent } from './deployments/apply-deployment-event';
import { DeploymentEventsConsumer } from './deployments/deployment-events.consumer';
import { EffectiveMcpServers } from './deployments/effective-mcp-servers';
import { PolicyCommandHandlers } from './policy.handlers';
import { POLICY_OPTIONS, resolvePolicyOptions, type PolicyModuleOptions } from './policy.options';
import { ApplyRunAdmitted } from './runs/apply-run-admitted';
import { CatchUpRun } from './runs/catch-up-run';
import { RunEventsConsumer } from './runs/run-events.consumer';

const POLICY_EVENT_SCHEMAS = Symbol('POLICY_EVENT_SCHEMAS');

/**
 * Compiled grants, authorisation decisions and attention records. Needs the global providers of
 * BusModule and EventStoreModule; reaches the scheduler only through its commands and events, and
 * the sandbox's registry of computers only through its commands.
 */
@Module({})
export class PolicyModule {
  static forRoot(options: PolicyModuleOptions = {}): DynamicModule {
    return {
      module: PolicyModule,
      providers: [
        { provide: POLICY_OPTIONS, useValue: resolvePolicyOptions(options) },
        {
          // What it consumes (deployment, run, timer events) and appends must decode and validate here.
          provide: POLICY_EVENT_SCHEMAS,
          useFactory: (registry: EventRegistry) => registerRunExecutionEvents(registerPolicyEvents(registerSchedulerEvents(registerIntakeEvents(registry)))),
          inject: [EVENT_REGISTRY],
        },
        EffectiveMcpServers,
        ApplyDeploymentEvent,
        DeploymentEventsConsumer,
        ApplyRunAdmitted,
        CatchUpRun,
        RunEventsConsumer,
        AnswerAttention,
        CheckEdit,
        ReadAttention,
        RaiseAttention,
        DeadlineTimersConsumer,
        ReconnectedCredentialsConsumer,
        ReadComputer,
        Authorize,
        GrantComputerKey,
        GrantRouteCredential,
        PolicyCommandHandlers,
      ],
    };
  }
}
