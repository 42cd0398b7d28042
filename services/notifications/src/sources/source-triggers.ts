import type { NotificationEvent, NotificationRoute } from '@packetagent/contracts';

/** Run events that end a run, with the route event they answer to besides `any_terminal`. */
const TERMINAL: Readonly<Record<string, NotificationEvent | null>> = {
  'run.succeeded': 'succeeded',
  'run.failed': 'failed',
  'run.timed_out': 'failed',
  'run.budget_exhausted': 'failed',
  'run.rejected': 'failed',
  'run.expired': 'failed',
  'run.abandoned': 'abandoned',
  'run.cancelled': null,
  'run.revoked': null,
};

/**
 * What a source event means to routes, from the most specific to the least: a route is sent the
 * event once, under the first of these it listens to. Events no route can listen to: [].
 */
export function triggersOf(eventType: string): NotificationEvent[] {
  if (eventType in TERMINAL) {
    const specific = TERMINAL[eventType];
    return specific ? [specific, 'any_terminal'] : ['any_terminal'];
  }
  switch (eventType) {
    case 'attention.requested':
      return ['attention'];
    case 'attention.reminded':
      return ['reminder'];
    case 'budget.warning':
      return ['budget_warning'];
    case 'run.checkpoint':
      return ['progress'];
    default:
      return [];
  }
}

export const isTerminalRunEvent = (eventType: string): boolean => eventType in TERMINAL;

/** The routes an event goes to, each with the trigger it is sent under; an escalation goes to its named route only. */
export function matchRoutes(
  routes: readonly NotificationRoute[],
  eventType: string,
  escalateTo: string | null = null,
): Array<{ index: number; route: NotificationRoute; trigger: NotificationEvent }> {
  if (eventType === 'attention.escalated') {
    const index = routes.findIndex((route) => route.name === escalateTo);
    return index < 0 ? [] : [{ index, route: routes[index]!, trigger: 'escalation' }];
  }
  const triggers = triggersOf(eventType);
  const matched: Array<{ index: number; route: NotificationRoute; trigger: NotificationEvent }> = [];
  routes.forEach((route, index) => {
    const trigger = triggers.find((candidate) => route.on.includes(candidate));
    if (trigger) matched.push({ index, route, trigger });
  });
  return matched;
}
