/** Time as the router sees it; tests pass their own so backoff waits cost nothing. */
export interface Clock {
  now(): number;
  /** Resolves after `ms`, or rejects as soon as `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export class SleepAbortedError extends Error {
  constructor() {
    super('sleep aborted');
    this.name = 'SleepAbortedError';
  }
}

export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new SleepAbortedError());
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new SleepAbortedError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: abortableSleep,
};
