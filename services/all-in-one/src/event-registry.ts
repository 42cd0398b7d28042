import {
  EventRegistry,
  registerBudgetEvents,
  registerIdentityEvents,
  registerIntakeEvents,
  registerNotificationEvents,
  registerPolicyEvents,
  registerRunCareEvents,
  registerRunExecutionEvents,
  registerSandboxEvents,
  registerSchedulerEvents,
  registerVaultEvents,
} from '@packetagent/contracts';

/**
 * The schemas this process decodes: every service's events from libs/contracts. An event
 * whose type or schema version is not here is refused loudly rather than guessed at.
 */
export const eventRegistry = registerNotificationEvents(registerSandboxEvents(registerRunCareEvents(
  registerVaultEvents(registerBudgetEvents(registerPolicyEvents(registerIdentityEvents(registerSchedulerEvents(registerRunExecutionEvents(registerIntakeEvents(new EventRegistry()))))))),
)));
