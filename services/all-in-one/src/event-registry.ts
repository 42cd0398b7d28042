import { EventRegistry } from '@packetagent/contracts';

/**
 * The schemas this process decodes. Each service contributes its own event schemas from
 * libs/contracts as it lands; until then the registry is empty and any event is refused
 * loudly rather than guessed at.
 */
export const eventRegistry = new EventRegistry();
