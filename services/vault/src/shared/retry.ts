import { ConcurrencyError } from '@packetagent/eventstore';

const ATTEMPTS = 5;

/**
 * Runs `work` again when an append lost to another replica: the event store's cached stream
 * head was stale, the failed statement aborted the transaction, and the next attempt reads the
 * head afresh. Writers of one credential are serialised by its lock, so this is rare.
 */
export async function retryOnConflict<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (error instanceof ConcurrencyError && attempt < ATTEMPTS) continue;
      throw error;
    }
  }
}
