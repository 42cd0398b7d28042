import {
  IdentityEventTypes,
  registerBudgetEvents,
  registerIdentityEvents,
  registerIntakeEvents,
  registerPolicyEvents,
  registerRunExecutionEvents,
  registerSchedulerEvents,
  registerVaultEvents,
  type EventRegistry,
} from '@packetagent/contracts';

/**
 * Every context's schemas: the projector reads every event, and an event of a known context
 * that it does not project must still decode (only what nothing here knows becomes a gap).
 * Safe on a registry that already holds some of them.
 */
export function registerProjectorEvents(registry: EventRegistry): EventRegistry {
  registerIntakeEvents(registry);
  registerRunExecutionEvents(registry);
  registerPolicyEvents(registry);
  registerBudgetEvents(registry);
  registerSchedulerEvents(registry);
  registerVaultEvents(registry);
  // Identity registers its versions one by one, which refuses a second registration.
  if (!registry.has(IdentityEventTypes.workspaceCreated)) registerIdentityEvents(registry);
  return registry;
}
