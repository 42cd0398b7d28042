import { EventTooLargeError } from '@packetagent/eventstore';
import { ToolAbortedError } from '@packetagent/tools';
import { decide } from '../run/run.decider';
import type { PinnedRun, RunEmit, RunIntent } from '../run/run.intent';
import type { RunAggregate } from '../run/run.state';
import { actOnCall, askOwner, abandonUncertainEffect, awaitBudget, planTurn, requestBudget, type StepContext } from './run-steps';
import { controlEvents } from './run-controls';
import { FenceLostError, RunChangedError, RunRecorder } from './run-recorder';
import type { RunPorts } from './ports';
import { RunInterruptedError } from './retry';

export { FenceLostError } from './run-recorder';

export type DriveOutcome = { status: 'terminal' } | { status: 'waiting'; waitingOn: string | null } | { status: 'interrupted'; reason: string };

/** Reasons after which the run goes on in this replica: the new facts are read, then it decides again. */
const CONTINUE_AFTER = new Set(['control', 'deadline']);

/**
 * One replica's turn at driving one run: a thin shell that asks the decider for the next
 * intent, carries it out through the ports, records the resulting events at the version it
 * knows, and asks again, until the run ends, waits for someone, or is interrupted.
 */
export class RunExecution {
  private controller = new AbortController();
  private interruptReason: string | null = null;
  private readonly recorder: RunRecorder;
  /** Operator requests may be waiting in the control stream: read them before the next decision. */
  private controlsToRead = true;

  constructor(
    private readonly ports: RunPorts,
    state: RunAggregate,
    private readonly pinned: PinnedRun,
    claim: { replica: string; claim: number },
  ) {
    this.recorder = new RunRecorder(state, ports.stream, ports.faults, ports.now, claim);
  }

  get runState(): RunAggregate {
    return this.recorder.state;
  }

  /** Cuts the call in flight; the loop then re-reads the run and honours the reason (a control request, the deadline...). */
  interrupt(reason: string): void {
    if (reason === 'control') this.controlsToRead = true;
    this.interruptReason = reason;
    this.controller.abort(reason);
  }

  async drive(): Promise<DriveOutcome> {
    const started = this.recorder.state.started;
    if (started) this.armDeadline(started.deadline);
    try {
      return await this.loop();
    } finally {
      if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    }
  }

  private deadlineTimer: NodeJS.Timeout | null = null;

  /** The deadline cuts a call in flight; between steps the decider checks it anyway. */
  private armDeadline(deadline: string): void {
    const untilDeadline = Math.max(0, Date.parse(deadline) - this.ports.now().getTime());
    this.deadlineTimer = setTimeout(() => this.interrupt('deadline'), Math.min(untilDeadline, 2_147_483_647));
  }

  private async loop(): Promise<DriveOutcome> {
    for (;;) {
      try {
        const outcome = await this.step();
        if (outcome) return outcome;
      } catch (error) {
        if (error instanceof FenceLostError) return { status: 'interrupted', reason: error.message };
        if (error instanceof RunChangedError) continue;
        if (error instanceof EventTooLargeError) return this.unrecordable(error.message);
        if (!(error instanceof RunInterruptedError || error instanceof ToolAbortedError || this.controller.signal.aborted)) throw error;
        const reason = this.interruptReason ?? 'interrupted';
        if (!CONTINUE_AFTER.has(reason)) return { status: 'interrupted', reason };
        this.controller = new AbortController();
        this.interruptReason = null;
        try {
          await this.recorder.refresh();
        } catch (refreshError) {
          if (refreshError instanceof FenceLostError) return { status: 'interrupted', reason: refreshError.message };
          throw refreshError;
        }
      }
    }
  }

  /** One decision carried out; answers an outcome when the drive is over for now. */
  private async step(): Promise<DriveOutcome | null> {
    if (this.controlsToRead) {
      this.controlsToRead = false;
      const requests = controlEvents(this.recorder.state, await this.ports.stream.readControls(this.recorder.state.controlVersion + 1));
      if (requests.length > 0) await this.recorder.commit(requests);
    }
    const intent: RunIntent = decide(this.recorder.state, this.pinned, this.ports.now());
    const context: StepContext = { ports: this.ports, recorder: this.recorder, pinned: this.pinned, signal: this.controller.signal };
    switch (intent.kind) {
      case 'done':
        return { status: 'terminal' };
      case 'idle':
        await this.wallTimerBeforeParking();
        return { status: 'waiting', waitingOn: intent.waitingOn };
      case 'start':
        await this.recorder.commit(intent.events);
        this.armDeadline(intent.deadline);
        // Between steps the deadline is checked in process; the durable timer only wakes a parked
        // run, so it is set beside the first model call and awaited before the run parks.
        this.wallTimer = this.setWallTimer(intent.deadline);
        return null;
      case 'record':
        await this.recorder.commit(intent.events, intent.checkpoint);
        return null;
      case 'end':
        return this.end(intent.events);
      case 'park':
        await this.recorder.commit(intent.events);
        await this.wallTimerBeforeParking();
        return { status: 'waiting', waitingOn: intent.waitingOn };
      case 'plan':
        return this.settle(await planTurn(context, intent.request));
      case 'act':
        return this.settle(await actOnCall(context, intent.call, intent.planned, intent.retry));
      case 'ask':
        return this.settle(await askOwner(context, intent.call, intent.planned));
      case 'abandon':
        return this.settle(await abandonUncertainEffect(context, intent.call, intent.planned, intent.effect));
      case 'request_budget':
        return this.settle(await requestBudget(context, intent.ask));
      case 'await_budget':
        return this.settle(await awaitBudget(context, intent.request));
    }
  }

  /** A step's result: go on, park, or end (the terminal events are already written by the step). */
  private async settle(result: { kind: 'continue' } | { kind: 'waiting'; waitingOn: string | null } | { kind: 'end'; events: RunEmit[] }): Promise<DriveOutcome | null> {
    if (result.kind === 'continue') return null;
    if (result.kind === 'waiting') {
      await this.wallTimerBeforeParking();
      return { status: 'waiting', waitingOn: result.waitingOn };
    }
    return this.end(result.events);
  }

  private async end(events: RunEmit[]): Promise<DriveOutcome> {
    await this.recorder.commit(events);
    // A set still in flight lands first, so the cancel is the last word.
    await this.wallTimer;
    await this.ports.timers.cancelWallTimer().catch(() => undefined);
    return { status: 'terminal' };
  }

  private wallTimer: Promise<void> | null = null;

  private setWallTimer(deadline: string): Promise<void> {
    return this.ports.timers.setWallTimer(deadline).catch((error: unknown) => {
      this.ports.log('warn', 'wall-time timer not set', { runId: this.recorder.state.runId, error: error instanceof Error ? error.message : String(error) });
    });
  }

  /**
   * A parked run needs its wall-time timer to be woken at its deadline. A drive that started the
   * run awaits the set it began; one that took a started run over and wrote something sets it
   * again (the scheduler keeps one timer per id), in case the starter died before its set landed.
   */
  private async wallTimerBeforeParking(): Promise<void> {
    const started = this.recorder.state.started;
    if (!started) return;
    if (!this.wallTimer && this.recorder.claimed) this.wallTimer = this.setWallTimer(started.deadline);
    await this.wallTimer;
  }

  /**
   * A step whose facts cannot be recorded (an event over the store's limit even after large
   * payloads went by reference): the run ends abandoned, with attention, rather than being
   * retried forever.
   */
  private async unrecordable(detail: string): Promise<DriveOutcome> {
    const attentionId = await this.ports.guard.raiseAttention('run_unrecordable', null, { reason: detail.slice(0, 1_000) }, new AbortController().signal).catch(() => null);
    await this.end([{ type: 'run.abandoned', data: { cause: 'unrecordable', detail: `a step of the run could not be recorded: ${detail}`.slice(0, 2_000), effect: null, attentionId } }]);
    return { status: 'terminal' };
  }
}
