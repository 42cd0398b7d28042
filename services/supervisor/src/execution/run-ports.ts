import type { CommandBus } from '@packetagent/bus';
import type { EventRegistry } from '@packetagent/contracts';
import type { PayloadStore, PostgresEventStore } from '@packetagent/eventstore';
import type { ProviderRouter, ResolvedModel } from '@packetagent/providers';
import type { McpCatalogue, ToolRegistry } from '@packetagent/tools';
import type { SupervisorOptions } from '../supervisor.options';
import { LedgerBudget } from './adapters/ledger-budget';
import { approvalRoleReader } from './adapters/approval-roles';
import { PolicyGuard } from './adapters/policy-guard';
import { RegistryEffects } from './adapters/registry-effects';
import { RouterModel } from './adapters/router-model';
import { SchedulerTimers } from './adapters/scheduler-timers';
import { StoreRunStream } from './adapters/store-run-stream';
import type { RunPorts } from './ports';

export interface RunInfrastructure {
  store: PostgresEventStore;
  payloads: PayloadStore;
  registry: EventRegistry;
  commands: CommandBus;
  router: ProviderRouter;
  tools: ToolRegistry;
  options: SupervisorOptions;
}

/** What one run event may take inline: well under the store's per-event limit (512 KiB), with room for the envelope. */
const EVENT_BUDGET_BYTES = 384 * 1024;

/** The production ports of one run. */
export function runPorts(run: { runId: string; workspaceId: string; effectiveDigest: string; browserUrls?: readonly string[]; mcp?: McpCatalogue }, model: ResolvedModel, infra: RunInfrastructure): RunPorts {
  const { options } = infra;
  return {
    model: new RouterModel(infra.router, infra.tools, model, run.mcp),
    guard: new PolicyGuard(infra.commands, run, approvalRoleReader(infra.store)),
    budget: new LedgerBudget(infra.commands, run, options.log),
    effects: new RegistryEffects(infra.tools, run, options.dataDir),
    stream: new StoreRunStream(infra.store, infra.registry, infra.payloads, run, { thresholdBytes: options.payloadThresholdBytes, eventBudgetBytes: EVENT_BUDGET_BYTES }),
    timers: new SchedulerTimers(infra.commands, run),
    faults: options.faults,
    now: () => new Date(),
    log: options.log,
  };
}
