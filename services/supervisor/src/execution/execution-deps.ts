import type { CommandBus } from '@packetagent/bus';
import type { DecodedEvent } from '@packetagent/contracts';
import type { PostgresEventStore } from '@packetagent/eventstore';
import type { ProviderRouter } from '@packetagent/providers';
import type { ToolRegistry } from '@packetagent/tools';
import type { SupervisorOptions } from '../supervisor.options';

/** What a run execution reaches outside itself: the store, the other services, providers and tools. */
export interface ExecutionDeps {
  store: PostgresEventStore;
  commands: CommandBus;
  router: ProviderRouter;
  registry: ToolRegistry;
  options: SupervisorOptions;
  now: () => Date;
  /** The run's events from `fromVersion` on, decoded; throws when one cannot be decoded. */
  readRun: (runId: string, fromVersion: number) => Promise<DecodedEvent[]>;
}
