export interface BackoffPolicy {
  /** The wait before the first retry. */
  baseMs: number;
  /** No computed wait is longer (a receiver's Retry-After may be: the delivery's expiry bounds it). */
  maxMs: number;
}

/**
 * The wait before retry number `attempt` (1 for the first retry): exponential from `baseMs`
 * with "equal jitter" (half fixed, half random, so retries of many deliveries spread out but
 * never come sooner than half the step), and never shorter than the receiver's Retry-After.
 * A Retry-After past the delivery's expiry dead-letters it (the caller checks).
 */
export function retryDelayMs(policy: BackoffPolicy, attempt: number, random: () => number, retryAfterMs?: number): number {
  const step = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
  const jittered = Math.floor(step / 2 + random() * (step / 2));
  const asked = retryAfterMs === undefined ? 0 : Math.ceil(retryAfterMs);
  return Math.max(jittered, asked);
}
