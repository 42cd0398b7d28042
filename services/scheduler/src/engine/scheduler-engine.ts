import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Pool } from 'pg';
import { LeaderLock, PG_POOL } from '@packetagent/eventstore';
import { SCHEDULER_OPTIONS, type ResolvedSchedulerOptions } from '../scheduler.options';
import { FireDueSchedules } from '../schedules/usecases/fire-due-schedules/fire-due-schedules';
import { FireDueTimers } from '../timers/usecases/fire-due-timers/fire-due-timers';

export interface SchedulerStatus {
  isLeader: boolean;
  /** Server process id of the leadership connection while leading. */
  leaderBackendPid: number | null;
  leaderSince: Date | null;
  /** Cron activations intake accepted (duplicates included), from this process. */
  firedTotal: number;
  /** Due instants dropped by the missed-tick policy. */
  droppedTotal: number;
  /** Activations that failed and were left for a retry. */
  failedTotal: number;
  /** Activations intake refused for good. */
  refusedTotal: number;
  timersFiredTotal: number;
  timerConflictsTotal: number;
  /** Completed leader rounds. */
  rounds: number;
  lastRoundAt: Date | null;
  lastError: string | null;
  lastErrorAt: Date | null;
}

/**
 * The scheduler's leader loop. Every replica runs it; the one holding the advisory lock fires
 * due cron schedules and timers, the others retry the lock every `leaderRetryMs`. The leader
 * sleeps until the earliest due time, never longer than `maxSleepMs` (1 s), and is woken early
 * by a change notification or by losing the lock.
 */
/** Advisory-lock namespace of the scheduler's leader ("PASC"). */
const SCHEDULER_LOCK_NAMESPACE = 0x5041_5343;

@Injectable()
export class SchedulerEngine implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly lock: LeaderLock;
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private woken = false;
  private state: SchedulerStatus = {
    isLeader: false,
    leaderBackendPid: null,
    leaderSince: null,
    firedTotal: 0,
    droppedTotal: 0,
    failedTotal: 0,
    refusedTotal: 0,
    timersFiredTotal: 0,
    timerConflictsTotal: 0,
    rounds: 0,
    lastRoundAt: null,
    lastError: null,
    lastErrorAt: null,
  };

  constructor(
    @Inject(PG_POOL) pool: Pool,
    @Inject(SCHEDULER_OPTIONS) private readonly options: ResolvedSchedulerOptions,
    private readonly schedules: FireDueSchedules,
    private readonly timers: FireDueTimers,
  ) {
    this.lock = new LeaderLock(pool, {
      namespace: SCHEDULER_LOCK_NAMESPACE,
      name: options.lockName,
      channel: options.notifyChannel,
      onLost: (reason) => {
        this.options.log('warn', 'scheduler lost its leadership', { reason });
        this.recordError(reason);
        this.wakeUp();
      },
      onNotification: () => this.wakeUp(),
    });
  }

  status(): SchedulerStatus {
    return { ...this.state, isLeader: this.lock.held, leaderBackendPid: this.lock.backendPid, leaderSince: this.lock.held ? this.state.leaderSince : null };
  }

  onApplicationBootstrap(): void {
    this.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops after the round in progress and gives the leadership up at once. */
  async stop(): Promise<void> {
    this.running = false;
    this.wakeUp();
    await this.loop;
    this.loop = null;
    await this.lock.release();
  }

  /** Looks at schedules and timers now (after a change made in this process). */
  wakeUp(): void {
    this.woken = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      if (!this.lock.held) {
        if (!(await this.acquire())) {
          await this.idle(this.options.leaderRetryMs);
          continue;
        }
      }
      try {
        this.woken = false;
        const delayMs = await this.round();
        await this.idle(delayMs);
      } catch (error) {
        this.recordError(error instanceof Error ? error.message : String(error));
        this.options.log('error', 'scheduler round failed', { error: this.state.lastError });
        if (this.lock.held) await this.idle(this.options.retryDelayMs);
      }
    }
  }

  private async acquire(): Promise<boolean> {
    try {
      if (!(await this.lock.tryAcquire())) return false;
      this.state.leaderSince = new Date();
      this.options.log('info', 'scheduler is the leader', { lock: this.options.lockName });
      return true;
    } catch (error) {
      this.recordError(error instanceof Error ? error.message : String(error));
      return false;
    }
  }

  /** One leader round; returns how long to sleep before the next. */
  private async round(): Promise<number> {
    const isLeader = () => this.running && this.lock.held;
    const now = this.options.clock();
    const cron = await this.schedules.execute(this.lock.connection(), now, isLeader);
    this.state.firedTotal += cron.fired;
    this.state.droppedTotal += cron.dropped;
    this.state.failedTotal += cron.failed;
    this.state.refusedTotal += cron.refused;
    if (cron.lastError) this.recordError(cron.lastError);
    const timers = await this.timers.execute(this.lock.connection(), now, this.options.batchSize, isLeader);
    this.state.timersFiredTotal += timers.fired;
    this.state.timerConflictsTotal += timers.conflicts;
    this.state.rounds++;
    this.state.lastRoundAt = now;
    // Whatever failed or conflicted is due again at once: pause rather than spin on it.
    if (cron.failed > 0 || timers.conflicts > 0) return this.options.retryDelayMs;
    const { rows } = await this.lock.connection().query<{ due: Date | null }>(
      `SELECT least(
         (SELECT min(next_due_at) FROM scheduler.schedules WHERE active),
         (SELECT min(due_at) FROM scheduler.timers WHERE state = 'pending')) AS due`,
    );
    const due = rows[0]!.due;
    const untilDue = due ? due.getTime() - this.options.clock().getTime() : Number.POSITIVE_INFINITY;
    return Math.max(0, Math.min(untilDue, this.options.maxSleepMs));
  }

  private recordError(message: string): void {
    this.state.lastError = message;
    this.state.lastErrorAt = new Date();
  }

  private idle(ms: number): Promise<void> {
    if (!this.running || this.woken || ms <= 0) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = null;
        this.woken = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
