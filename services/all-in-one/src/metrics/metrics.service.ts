import { Injectable, Optional } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { OutboxRelay } from '@packetagent/eventstore';
import { SchedulerEngine } from '@packetagent/scheduler';
import { FINDING_CAUSES, StuckRunWatchdog } from '@packetagent/supervisor';

const SUMMED_GAUGES_NAMED_LIKE_COUNTERS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/**
 * Prometheus metrics of this process: Node's defaults, the relay's, the scheduler's and the
 * stuck-run watchdog's. Figures are read at scrape time (status and the shared backlog), so
 * nothing is computed between scrapes.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  private readonly seen = { published: 0, repaired: 0, abandoned: 0, fired: 0, dropped: 0, failed: 0, refused: 0, timers: 0, wakes: 0, raised: 0 };

  constructor(
    private readonly relay: OutboxRelay,
    private readonly scheduler: SchedulerEngine,
    // Absent in a process that does not drive runs (PACKETAGENT_SUPERVISOR_ENABLED=false).
    @Optional() watchdog?: StuckRunWatchdog,
  ) {
    collectDefaultMetrics({ register: this.registry });
    // prom-client also reports each active-handle/request/resource gauge summed as `…_total`, a
    // counter's suffix on a gauge (promtool refuses it); the summed figure is sum() of the gauge by type.
    for (const name of SUMMED_GAUGES_NAMED_LIKE_COUNTERS) this.registry.removeSingleMetric(name);
    const registers = [this.registry];
    const status = () => this.relay.status();

    new Gauge({
      name: 'packetagent_relay_active',
      help: '1 when this process holds the relay leadership, 0 when it stands by or is stopped.',
      registers,
      collect() {
        this.set(status().role === 'active' ? 1 : 0);
      },
    });
    // Both figures come from one backlog query per scrape; the backlog gauge is collected
    // first (registration order) and sets the stall gauge on the way.
    const lag = () => this.relay.lag();
    new Gauge({
      name: 'packetagent_relay_backlog_events',
      help: 'Committed events not yet acknowledged by JetStream (shared by all replicas).',
      registers,
      async collect() {
        const current = await lag();
        this.set(current.events);
        stalled.set(current.stalledMs / 1_000);
      },
    });
    const stalled = new Gauge({
      name: 'packetagent_relay_stalled_seconds',
      help: 'How long committed events have waited for the relay; 0 when nothing is behind.',
      registers,
    });
    new Gauge({
      name: 'packetagent_relay_cursor_position',
      help: 'Last global position this process saw acknowledged by JetStream.',
      registers,
      collect() {
        this.set(status().cursor);
      },
    });
    new Gauge({
      name: 'packetagent_relay_waiting_on_position',
      help: 'Position the relay waits at while a transaction may still fill it; 0 when not waiting.',
      registers,
      collect() {
        this.set(status().waitingOn ?? 0);
      },
    });
    this.counter('packetagent_relay_published_events_total', 'Events this process published to JetStream.', 'published', () => status().publishedTotal);
    this.counter('packetagent_relay_repaired_events_total', 'Events republished because the stream had lost them.', 'repaired', () => status().repairedTotal);
    this.counter('packetagent_relay_skipped_positions_total', 'Positions skipped as belonging to rolled-back appends.', 'abandoned', () => status().abandonedTotal);

    const schedulerStatus = () => this.scheduler.status();
    new Gauge({
      name: 'packetagent_scheduler_leader',
      help: '1 when this process fires cron ticks and timers (holds the scheduler lock), else 0.',
      registers,
      collect() {
        this.set(schedulerStatus().isLeader ? 1 : 0);
      },
    });
    this.counter('packetagent_scheduler_ticks_fired_total', 'Cron ticks this process sent to intake and intake accepted.', 'fired', () => schedulerStatus().firedTotal);
    this.counter('packetagent_scheduler_ticks_dropped_total', 'Cron ticks dropped by the missed-tick policy.', 'dropped', () => schedulerStatus().droppedTotal);
    this.counter('packetagent_scheduler_ticks_failed_total', 'Cron ticks that failed and were left for a retry.', 'failed', () => schedulerStatus().failedTotal);
    this.counter('packetagent_scheduler_ticks_refused_total', 'Cron ticks intake refused for good (e.g. a revoked deployment).', 'refused', () => schedulerStatus().refusedTotal);
    this.counter('packetagent_scheduler_timers_fired_total', 'Durable timers this process fired.', 'timers', () => schedulerStatus().timersFiredTotal);

    if (watchdog) {
      // The leader's last sweep, stored in Postgres: every replica reports the same figures.
      new Gauge({
        name: 'packetagent_runs_without_owner',
        help: 'Runs not over that no replica drives and no wake will reach, by cause (unclaimed, lapsed, wait_lost, wait_answered, quarantined); 0 in steady state.',
        labelNames: ['cause'],
        registers,
        async collect() {
          // Without Postgres the scrape still answers, with the figures last read.
          const counts = await watchdog.withoutOwner().catch(() => null);
          if (counts) for (const cause of FINDING_CAUSES) this.set({ cause }, counts[cause]);
        },
      });
      new Gauge({
        name: 'packetagent_watchdog_leader',
        help: '1 when this process runs the stuck-run watchdog sweeps (holds its lock), else 0.',
        registers,
        collect() {
          this.set(watchdog.status().leader ? 1 : 0);
        },
      });
      this.counter('packetagent_watchdog_wakes_total', 'Runs without an owner this process woke.', 'wakes', () => watchdog.status().wakesTotal);
      this.counter('packetagent_watchdog_attention_raised_total', 'Attention records this process raised for runs it could not carry on.', 'raised', () => watchdog.status().attentionRaisedTotal);
    }
  }

  private counter(name: string, help: string, key: keyof MetricsService['seen'], read: () => number): void {
    const seen = this.seen;
    new Counter({
      name,
      help,
      registers: [this.registry],
      collect() {
        const now = read();
        if (now > seen[key]) this.inc(now - seen[key]);
        seen[key] = now;
      },
    });
  }
}
