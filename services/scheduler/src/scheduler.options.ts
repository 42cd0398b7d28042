export type SchedulerLog = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;

export interface SchedulerModuleOptions {
  /** Name of the leadership lock: one active leader per name and database. */
  lockName?: string;
  /** skip policy: a scheduled instant is fired only if at most this late, in milliseconds. */
  tickToleranceMs?: number;
  /** fire_once policy: a missed instant older than this is not caught up, in milliseconds. */
  maxCatchUpMs?: number;
  /** How often a standby tries to take the leadership, in milliseconds. */
  leaderRetryMs?: number;
  /** Longest sleep of the leader loop, in milliseconds (at most 1 000). */
  maxSleepMs?: number;
  /** Pause before the leader retries after a failed activation or round, in milliseconds (at most 1 000). */
  retryDelayMs?: number;
  /** Schedules and timers handled per round. */
  batchSize?: number;
  /** Activations awaiting intake's reply at the same time. */
  fireConcurrency?: number;
  /** How long to wait for intake to answer an activation, in milliseconds. */
  activateTimeoutMs?: number;
  /** LISTEN/NOTIFY channel that wakes the leader when schedules or timers change. */
  notifyChannel?: string;
  /** The time source; tests inject one to simulate downtime. */
  clock?: () => Date;
  log?: SchedulerLog;
}

export type ResolvedSchedulerOptions = Required<SchedulerModuleOptions>;

export const SCHEDULER_OPTIONS = Symbol('SCHEDULER_OPTIONS');

const LOOP_SLEEP_CAP_MS = 1_000;

export function resolveSchedulerOptions(options: SchedulerModuleOptions = {}): ResolvedSchedulerOptions {
  const resolved: ResolvedSchedulerOptions = {
    lockName: options.lockName ?? 'scheduler',
    tickToleranceMs: options.tickToleranceMs ?? 60_000,
    maxCatchUpMs: options.maxCatchUpMs ?? 7 * 24 * 3_600_000,
    leaderRetryMs: options.leaderRetryMs ?? 1_000,
    maxSleepMs: Math.min(options.maxSleepMs ?? LOOP_SLEEP_CAP_MS, LOOP_SLEEP_CAP_MS),
    retryDelayMs: Math.min(options.retryDelayMs ?? 1_000, LOOP_SLEEP_CAP_MS),
    batchSize: options.batchSize ?? 100,
    fireConcurrency: options.fireConcurrency ?? 8,
    activateTimeoutMs: options.activateTimeoutMs ?? 5_000,
    notifyChannel: options.notifyChannel ?? 'pa_scheduler',
    clock: options.clock ?? (() => new Date()),
    log: options.log ?? (() => undefined),
  };
  for (const key of ['tickToleranceMs', 'maxCatchUpMs', 'leaderRetryMs', 'maxSleepMs', 'retryDelayMs', 'activateTimeoutMs'] as const) {
    if (!Number.isFinite(resolved[key]) || resolved[key] < 0) throw new Error(`scheduler option ${key} must be a non-negative number of milliseconds`);
  }
  for (const key of ['batchSize', 'fireConcurrency'] as const) {
    if (!Number.isInteger(resolved[key]) || resolved[key] < 1) throw new Error(`scheduler option ${key} must be a positive integer`);
  }
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(resolved.notifyChannel)) throw new Error('scheduler option notifyChannel must be a lower-case identifier');
  return resolved;
}
