import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { BUDGET_OPTIONS, type ResolvedBudgetOptions } from '../budget.options';
import { ExpireDueReservations } from './usecases/expire-due/expire-due';

/**
 * Runs in every replica. Holds past their TTL already stop counting against limits; the sweep
 * records their expiry (`budget.expired`) and deletes them, and is safe to run concurrently.
 */
@Injectable()
export class ExpirySweeper implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly expireDue: ExpireDueReservations,
    @Inject(BUDGET_OPTIONS) private readonly options: ResolvedBudgetOptions,
  ) {}

  onApplicationBootstrap(): void {
    if (this.options.sweeper) this.schedule();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.round;
  }

  /** One sweep until nothing is due; returns how many reservations expired. */
  async sweep(): Promise<number> {
    let total = 0;
    for (;;) {
      const expired = await this.expireDue.execute();
      total += expired;
      if (expired < this.options.sweepBatchSize || this.stopped) return total;
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.round = this.sweep()
        .then(
          (expired) => {
            if (expired) this.options.log('info', 'budget reservations expired', { expired });
          },
          (error: unknown) => this.options.log('error', 'budget expiry sweep failed', { error: error instanceof Error ? error.message : String(error) }),
        )
        .finally(() => this.schedule());
    }, this.options.sweepIntervalMs);
    this.timer.unref();
  }
}
