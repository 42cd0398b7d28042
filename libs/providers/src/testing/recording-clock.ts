import { SleepAbortedError, type Clock } from '../lib/clock';

/**
 * A clock whose backoff waits return at once and are recorded, so a test can check the delays
 * the router chose without spending them. An aborted signal still rejects, as the real one does.
 */
export class RecordingClock implements Clock {
  readonly sleeps: number[] = [];

  now(): number {
    return Date.now();
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    if (signal?.aborted) throw new SleepAbortedError();
  }
}
