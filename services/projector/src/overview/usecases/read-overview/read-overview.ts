import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { z } from 'zod';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { BUS_TOPOLOGY, CommandBus, NATS_CONNECTION, type Topology } from '@packetagent/bus';
import { BudgetCommands, MICRO_USD_PER_USD, type ProjectorCommands } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import { PROJECTOR_SCHEMA } from '@packetagent/projections';
import { PROJECTOR_OPTIONS, type ResolvedProjectorOptions } from '../../../projector.options';

export type ReadOverviewRequest = z.output<typeof ProjectorCommands.overview.request>;
export type ReadOverviewResult = z.input<typeof ProjectorCommands.overview.response>;
type Budget = ReadOverviewResult['budgets'][number];

const S = PROJECTOR_SCHEMA;

/**
 * The workspace at a glance: run counts, open attention and today's spend from the
 * projections, limited scopes from the budget ledger (the authority for rolling windows), and
 * whether the pipeline from the store to the projections is keeping up.
 */
@Injectable()
export class ReadOverview {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_TOPOLOGY) private readonly topo: Topology,
    @Inject(PROJECTOR_OPTIONS) private readonly options: ResolvedProjectorOptions,
    private readonly bus: CommandBus,
  ) {}

  async execute(request: ReadOverviewRequest): Promise<ReadOverviewResult> {
    const [tables, relayLagMs, deadLetters, budgets] = await Promise.all([
      this.readTables(request.workspaceId),
      this.relayLagMs(),
      this.deadLetters(),
      this.budgets(request.workspaceId),
    ]);
    const degraded =
      tables.gaps > 0 ||
      deadLetters > 0 ||
      relayLagMs > this.options.degradedRelayLagMs ||
      tables.projectionLagEvents > this.options.degradedProjectionLagEvents;
    return {
      asOf: tables.asOf,
      runs: tables.runs,
      attention: { open: tables.openAttention },
      spendTodayUsd: tables.spentTodayMicros / MICRO_USD_PER_USD,
      budgets,
      health: { status: degraded ? 'degraded' : 'ok', relayLagMs, deadLetters, projectionLagEvents: tables.projectionLagEvents, gaps: tables.gaps },
    };
  }

  /** One statement, so every count is read at the same instant. */
  private async readTables(workspaceId: string) {
    const { rows } = await this.pool.query<{
      as_of: Date;
      queued: string;
      running: string;
      waiting: string;
      succeeded_today: string;
      failed_today: string;
      open_attention: string;
      spent_today: string;
      gaps: string;
      lag: string;
    }>(
      `WITH t AS (SELECT now() AS as_of, date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS today)
       SELECT t.as_of,
              r.queued, r.running, r.waiting, r.succeeded_today, r.failed_today,
              (SELECT count(*) FROM ${S}.attention a WHERE a.workspace_id = $1 AND a.state = 'open') AS open_attention,
              (SELECT coalesce(sum(s.spent), 0) FROM ${S}.budget_spend s
                WHERE s.workspace_id = $1 AND s.unit = 'usd' AND s.day = to_char(t.as_of AT TIME ZONE 'UTC', 'YYYY-MM-DD')) AS spent_today,
              (SELECT count(*) FROM ${S}.gaps g WHERE g.workspace_id = $1) AS gaps,
              (SELECT count(*) FROM events e WHERE e.workspace_id = $1
                  AND e.global_position > (SELECT coalesce(min(c.position), 0) FROM ${S}.checkpoints c)) AS lag
         FROM t
         CROSS JOIN LATERAL (
           SELECT count(*) FILTER (WHERE state = 'queued') AS queued,
                  count(*) FILTER (WHERE state = 'running') AS running,
                  count(*) FILTER (WHERE state = 'waiting') AS waiting,
                  count(*) FILTER (WHERE phase = 'ended' AND state = 'succeeded' AND ended_at >= t.today) AS succeeded_today,
                  count(*) FILTER (WHERE phase = 'ended' AND state <> 'succeeded' AND ended_at >= t.today) AS failed_today
             FROM ${S}.runs WHERE workspace_id = $1 AND (state IN ('queued', 'running', 'waiting') OR ended_at >= t.today)
         ) r`,
      [workspaceId],
    );
    const row = rows[0]!;
    return {
      asOf: row.as_of.toISOString(),
      runs: {
        queued: Number(row.queued),
        running: Number(row.running),
        waiting: Number(row.waiting),
        succeededToday: Number(row.succeeded_today),
        failedToday: Number(row.failed_today),
      },
      openAttention: Number(row.open_attention),
      spentTodayMicros: Number(row.spent_today),
      gaps: Number(row.gaps),
      projectionLagEvents: Number(row.lag),
    };
  }

  /**
   * How long committed events have waited for the relay: the lesser of the oldest unpublished
   * event's age and the time since the cursor last moved (as the relay itself reports it).
   */
  private async relayLagMs(): Promise<number> {
    const { rows } = await this.pool.query<{ behind: string; oldest_ms: string | null; cursor_ms: string | null }>(
      `SELECT b.behind, extract(epoch FROM now() - b.oldest) * 1000 AS oldest_ms, extract(epoch FROM now() - c.updated_at) * 1000 AS cursor_ms
         FROM (VALUES ($1::text)) AS n(name)
         LEFT JOIN relay_cursors c ON c.name = n.name
         CROSS JOIN LATERAL (
           SELECT count(*) AS behind, min(e.occurred_at) AS oldest FROM events e WHERE e.global_position > coalesce(c.position, 0)
         ) b`,
      [this.options.relayName],
    );
    const row = rows[0]!;
    if (Number(row.behind) === 0) return 0;
    const oldest = Number(row.oldest_ms ?? 0);
    const sinceCursor = row.cursor_ms === null ? oldest : Number(row.cursor_ms);
    return Math.max(0, Math.round(Math.min(oldest, sinceCursor)));
  }

  /** Messages parked in the dead-letter stream; none when it does not exist yet. */
  private async deadLetters(): Promise<number> {
    try {
      const jsm = await jetstreamManager(this.nc);
      return (await jsm.streams.info(this.topo.deadLetterStream)).state.messages;
    } catch {
      return 0;
    }
  }

  /** Deployment and workspace scopes (run scopes would crowd an overview out). */
  private async budgets(workspaceId: string): Promise<Budget[]> {
    try {
      const usage = await this.bus.request(BudgetCommands.usage, { workspaceId, limit: 200 }, { timeoutMs: this.options.budgetTimeoutMs });
      return usage.scopes
        .filter((scope) => scope.kind !== 'run')
        .map((scope) => ({ scope: { kind: scope.kind, id: scope.id, unit: scope.unit, window: scope.window }, limit: scope.limit, spent: scope.spent, held: scope.held }));
    } catch (error) {
      this.options.log('warn', 'budget ledger did not answer; the overview lists no budgets', { error: error instanceof Error ? error.message : String(error) });
      return [];
    }
  }
}
