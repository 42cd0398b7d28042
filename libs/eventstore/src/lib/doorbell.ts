import type { Pool } from 'pg';

/**
 * Post-commit NOTIFY, coalesced: at most one in flight per event store, plus one more if commits
 * arrived meanwhile. NOTIFY inside the appending transaction would take Postgres' global notify
 * lock at every commit and serialise all writers; the relay's polling covers a lost ring.
 */
export class Doorbell {
  private inFlight = false;
  private pending = false;

  constructor(
    private readonly pool: Pool,
    private readonly channel: string,
  ) {}

  ring(): void {
    if (this.inFlight) {
      this.pending = true;
      return;
    }
    this.inFlight = true;
    this.pool
      .query('SELECT pg_notify($1, $2)', [this.channel, ''])
      .catch(() => undefined)
      .finally(() => {
        this.inFlight = false;
        if (this.pending) {
          this.pending = false;
          this.ring();
        }
      });
  }
}
