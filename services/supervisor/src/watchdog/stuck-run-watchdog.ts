import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { CommandBus, RemoteCommandError } from '@packetagent/bus';
import { PolicyCommands, PolicyErrorCodes } from '@packetagent/contracts';
import { LeaderLock, PG_POOL } from '@packetagent/eventstore';
import type { Pool } from 'pg';
import { SupervisorEngine } from '../engine/supervisor-engine';
import { SUPERVISOR_OPTIONS, type SupervisorOptions } from '../supervisor.options';
import { countByCause, findingKey, planSweep, type Finding, type FindingCause, type Observation, type SweepAction, type WakeOutcome } from './watchdog.plan';
import { WatchdogRows, type WaitingRow } from './watchdog.rows';

/** Rows of each kind one sweep looks at; more are left for the next sweep. */
const BATCH = 500;
/** Attention records one sweep asks policy about one by one (those the open list did not show). */
const MAX_LOOKUPS = 100;
/** The largest page policy lists. */
const OPEN_LIST_LIMIT = 500;

export interface WatchdogStatus {
  leader: boolean;
  sweeps: number;
  lastSweepAt: Date | null;
  lastSweepMs: number | null;
  /** Findings of this replica's last sweep, per cause. */
  found: Record<FindingCause, number>;
  wakesTotal: number;
  attentionRaisedTotal: number;
  lastError: string | null;
}

export interface SweepReport {
  findings: Finding[];
  actions: SweepAction[];
  durationMs: number;
}

/**
 * The stuck-run watchdog. Every replica runs it; the one holding the advisory lock sweeps every
 * `watchdogIntervalMs` for runs that are not over and have no live owner, wakes those that can
 * go on and asks a person (an attention record, once per cause) about those that cannot. The
 * other replicas retry the lock. See docs/adr/0020-stuck-run-watchdog.md.
 */
/** Advisory-lock namespace of the supervisor's leader roles ("PASV"); the scheduler and the relay use their own. */
const WATCHDOG_LOCK_NAMESPACE = 0x5041_5356;

@Injectable()
export class StuckRunWatchdog implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly lock: LeaderLock;
  private readonly rows: WatchdogRows;
  private running = false;
  private loop: Promise<void> | null = null;
  private sleeping: { timer: NodeJS.Timeout; resolve: () => void } | null = null;
  private sweeping: Promise<SweepReport | null> | null = null;
  private readonly wakeOutcomes = new Map<string, WakeOutcome>();
  private state: Omit<WatchdogStatus, 'leader'> = {
    sweeps: 0,
    lastSweepAt: null,
    lastSweepMs: null,
    found: countByCause([]),
    wakesTotal: 0,
    attentionRaisedTotal: 0,
    lastError: null,
  };

  constructor(
    @Inject(PG_POOL) pool: Pool,
    private readonly engine: SupervisorEngine,
    private readonly commands: CommandBus,
    @Inject(SUPERVISOR_OPTIONS) private readonly options: SupervisorOptions,
  ) {
    this.rows = new WatchdogRows(pool);
    this.lock = new LeaderLock(pool, {
      namespace: WATCHDOG_LOCK_NAMESPACE,
      name: 'supervisor-watchdog',
      onLost: (reason) => {
        this.options.log('warn', 'watchdog lost its leadership', { reason });
        this.wakeUp();
      },
    });
  }

  status(): WatchdogStatus {
    return { leader: this.lock.held, ...this.state, found: { ...this.state.found } };
  }

  /** Runs without an owner per cause, as the leader's last sweep stored them: the same on every replica. */
  async withoutOwner(): Promise<Record<FindingCause, number>> {
    const counts = countByCause([]);
    for (const row of await this.rows.counts()) counts[row.cause] = row.count;
    return counts;
  }

  onApplicationBootstrap(): void {
    this.running = true;
    this.loop = this.run();
  }

  async onModuleDestroy(): Promise<void> {
    this.running = false;
    this.wakeUp();
    await this.loop;
    this.loop = null;
    await this.lock.release();
  }

  /**
   * One sweep now, after the one in progress if any; null on a replica that does not lead.
   * The leader loop calls it every interval.
   */
  async sweep(): Promise<SweepReport | null> {
    const previous = this.sweeping;
    const next = (async () => {
      await previous?.catch(() => undefined);
      if (!(await this.lock.confirm())) return null;
      return this.sweepOnce();
    })();
    this.sweeping = next;
    try {
      return await next;
    } finally {
      if (this.sweeping === next) this.sweeping = null;
    }
  }

  private async run(): Promise<void> {
    while (this.running) {
      if (!this.lock.held) {
        const acquired = await this.lock.tryAcquire().catch((error: unknown) => {
          this.state.lastError = error instanceof Error ? error.message : String(error);
          return false;
        });
        if (!acquired) {
          await this.idle(Math.min(this.options.watchdogIntervalMs, 1_000));
          continue;
        }
        this.options.log('info', 'watchdog is the leader', { replica: this.options.replicaId });
      }
      try {
        await this.sweep();
      } catch (error) {
        this.state.lastError = error instanceof Error ? error.message : String(error);
        this.options.log('error', 'watchdog sweep failed', { error: this.state.lastError });
      }
      await this.idle(this.options.watchdogIntervalMs);
    }
  }

  private idle(ms: number): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.sleeping = null;
        resolve();
      }, ms);
      this.sleeping = { timer, resolve };
    });
  }

  private wakeUp(): void {
    const sleeping = this.sleeping;
    if (!sleeping) return;
    this.sleeping = null;
    clearTimeout(sleeping.timer);
    sleeping.resolve();
  }

  private async sweepOnce(): Promise<SweepReport> {
    const started = performance.now();
    const now = await this.rows.now();
    // One after the other: the sweep holds one pooled connection at a time.
    const admissions = await this.rows.unclaimedAdmissions(this.options.relayName, BATCH);
    const lapsed = await this.rows.lapsedLeases(this.options.watchdogGraceMs, BATCH);
    const waiting = await this.rows.waitingOnAttention(BATCH);
    const quarantined = await this.rows.quarantined(BATCH);
    const previous = await this.rows.findings();
    const waits = await this.checkWaits(waiting);
    const observed: Observation[] = [
      ...admissions.map((run) => ({ cause: 'unclaimed' as const, runId: run.runId, workspaceId: run.workspaceId, admittedAt: run.admittedAt })),
      ...lapsed.map((run) => ({ cause: 'lapsed' as const, ...run })),
      ...waits.observed,
      ...quarantined.map((run) => ({ cause: 'quarantined' as const, ...run })),
    ];
    const plan = planSweep({ now, graceMs: this.options.watchdogGraceMs, observed, previous, unchecked: waits.unchecked, wakes: new Map(this.wakeOutcomes) });
    // An outcome is counted by the plan that sees it; only wakes still under way carry over.
    for (const [runId, outcome] of this.wakeOutcomes) if (outcome !== 'pending') this.wakeOutcomes.delete(runId);

    const findings = new Map(plan.findings.map((finding) => [findingKey(finding.runId, finding.cause), finding]));
    for (const action of plan.actions) {
      if (action.kind === 'wake') this.wake(action.runId, action.workspaceId);
    }
    await Promise.all(
      plan.actions.map(async (action) => {
        if (action.kind !== 'raise') return;
        const attentionId = await this.raise(action);
        const finding = findings.get(action.key);
        if (attentionId && finding) finding.attentionId = attentionId;
      }),
    );

    const durationMs = performance.now() - started;
    await this.rows.saveSweep(plan.findings, durationMs);
    this.state.sweeps += 1;
    this.state.lastSweepAt = new Date();
    this.state.lastSweepMs = durationMs;
    this.state.found = countByCause(plan.findings);
    this.state.lastError = null;
    return { findings: plan.findings, actions: plan.actions, durationMs };
  }

  /**
   * Which waits can no longer end as they should. One list of open records per workspace
   * settles most; policy is asked about each of the others (answered, or gone).
   */
  private async checkWaits(waiting: WaitingRow[]): Promise<{ observed: Observation[]; unchecked: Set<string> }> {
    const observed: Observation[] = [];
    const unchecked = new Set<string>();
    const skip = (row: WaitingRow) => {
      unchecked.add(findingKey(row.runId, 'wait_lost'));
      unchecked.add(findingKey(row.runId, 'wait_answered'));
    };
    const byWorkspace = new Map<string, WaitingRow[]>();
    for (const row of waiting) byWorkspace.set(row.workspaceId, [...(byWorkspace.get(row.workspaceId) ?? []), row]);
    const toLookUp: WaitingRow[] = [];
    for (const [workspaceId, rows] of byWorkspace) {
      try {
        const open = await this.commands.request(PolicyCommands.listAttention, { workspaceId, state: 'open', limit: OPEN_LIST_LIMIT });
        const ids = new Set(open.items.map((item) => item.id));
        toLookUp.push(...rows.filter((row) => !ids.has(row.attentionId)));
      } catch (error) {
        this.options.log('warn', 'watchdog could not list open attention', { workspaceId, error: error instanceof Error ? error.message : String(error) });
        rows.forEach(skip);
      }
    }
    toLookUp.slice(MAX_LOOKUPS).forEach(skip);
    await Promise.all(
      toLookUp.slice(0, MAX_LOOKUPS).map(async (row) => {
        try {
          const attention = await this.commands.request(PolicyCommands.getAttention, { workspaceId: row.workspaceId, attentionId: row.attentionId });
          if (attention.state === 'open') return;
          observed.push({
            cause: 'wait_answered',
            runId: row.runId,
            workspaceId: row.workspaceId,
            attentionId: row.attentionId,
            state: attention.state,
            answeredAt: new Date(attention.answeredAt ?? attention.createdAt),
          });
        } catch (error) {
          if (error instanceof RemoteCommandError && error.code === PolicyErrorCodes.attentionNotFound) {
            observed.push({ cause: 'wait_lost', runId: row.runId, workspaceId: row.workspaceId, attentionId: row.attentionId });
          } else {
            skip(row);
          }
        }
      }),
    );
    return { observed, unchecked };
  }

  /** The engine drives the run from here; its outcome is read by the next sweep. */
  private wake(runId: string, workspaceId: string): void {
    this.wakeOutcomes.set(runId, 'pending');
    this.state.wakesTotal += 1;
    this.options.log('info', 'watchdog wakes a run without an owner', { runId });
    this.engine.wake(runId, workspaceId).then(
      (result) => this.wakeOutcomes.set(runId, result),
      (error: unknown) => {
        this.wakeOutcomes.set(runId, 'failed');
        this.options.log('warn', 'watchdog could not wake a run', { runId, error: error instanceof Error ? error.message : String(error) });
      },
    );
  }

  /** The attention record's id, or null when policy could not take it (it is asked again next sweep). */
  private async raise(action: Extract<SweepAction, { kind: 'raise' }>): Promise<string | null> {
    try {
      const attention = await this.commands.request(PolicyCommands.raiseAttention, {
        workspaceId: action.workspaceId,
        runId: action.runId,
        kind: action.attention.kind,
        tool: 'supervisor',
        verb: action.attention.verb,
        resource: null,
        arguments: action.attention.arguments,
      });
      this.state.attentionRaisedTotal += 1;
      this.options.log('warn', 'watchdog asked a person about a run it cannot carry on', { runId: action.runId, kind: action.attention.kind, attentionId: attention.id });
      return attention.id;
    } catch (error) {
      this.options.log('warn', 'watchdog could not raise attention', { runId: action.runId, error: error instanceof Error ? error.message : String(error) });
      return null;
    }
  }
}
