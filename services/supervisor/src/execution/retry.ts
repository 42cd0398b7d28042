import { DomainError } from '@packetagent/contracts';

/** The run's work was interrupted: by a stop, a pause, its deadline, a lost lease or shutdown. */
export class RunInterruptedError extends DomainError {
  readonly code = 'run_interrupted';
}

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new RunInterruptedError(String(signal.reason ?? 'interrupted'));
}

export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new RunInterruptedError(String(signal.reason ?? 'interrupted')));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new RunInterruptedError(String(signal.reason ?? 'interrupted')));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Repeats `work` while it fails with a retryable error (a service briefly unavailable, a run
 * not yet known to a service that follows events), with capped backoff, up to `deadlineMs`.
 */
export async function withRetries<T>(work: () => Promise<T>, signal: AbortSignal, deadlineMs = 15_000): Promise<T> {
  const giveUpAt = Date.now() + deadlineMs;
  for (let attempt = 0; ; attempt++) {
    throwIfAborted(signal);
    try {
      return await work();
    } catch (error) {
      const retryable = error instanceof DomainError && error.retryable;
      if (!retryable || Date.now() >= giveUpAt) throw error;
      await abortableDelay(Math.min(50 * 2 ** attempt, 1_000), signal);
    }
  }
}
