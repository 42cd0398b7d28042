import { DomainError, newEventId, type DecodedEvent } from '@packetagent/contracts';
import { ConcurrencyError } from '@packetagent/eventstore';
import type { Phase, RunEmit } from '../run/run.intent';
import { checkpointDigest, evolveRun, stateDigest, type RunAggregate } from '../run/run.state';
import type { FaultPort, RunStreamPort } from './ports';

/** Another writer took the run: this replica stops working on it at once. */
export class FenceLostError extends DomainError {
  readonly code = 'run_fence_lost';
}

/** Intake (still the owner before this replica's claim went out) wrote meanwhile: decide again on what it wrote. */
export class RunChangedError extends DomainError {
  readonly code = 'run_changed';
}

/** Operator requests intake appended to the run's own stream before ownership moved to the control stream. */
const LEGACY_OPERATOR_TYPES = new Set(['run.stop_requested', 'run.pause_requested', 'run.resume_requested']);

/**
 * The run stream system: folds what the shell decided and appends it at the version this
 * replica knows, with a checkpoint closing a phase. The replica's `run.claimed` goes out with
 * its first append, so a wake that finds nothing to do (a duplicate or republished message)
 * leaves the stream as it was.
 */
export class RunRecorder {
  private claimEvent: RunEmit | null;

  constructor(
    private current: RunAggregate,
    private readonly stream: RunStreamPort,
    private readonly faults: FaultPort | null,
    private readonly now: () => Date,
    claim: { replica: string; claim: number },
  ) {
    this.claimEvent = { type: 'run.claimed', data: { replica: claim.replica, claim: claim.claim, fromCheckpoint: current.checkpoint?.version ?? null } };
  }

  get state(): RunAggregate {
    return this.current;
  }

  get claimed(): boolean {
    return this.claimEvent === null;
  }

  /** Appends the claim alone when nothing else has gone out yet: before a model call or an effect, the run must be fenced. */
  async ensureClaimed(): Promise<void> {
    if (this.claimEvent) await this.commit([]);
  }

  /**
   * Appends `events` (and a checkpoint closing `phase`). When someone appended meanwhile, what
   * they wrote is folded in and the append is tried again if it could only have come from
   * before this replica's claim; anything written after it means another writer has the run.
   */
  async commit(events: RunEmit[], phase?: Phase): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const all = this.claimEvent ? [this.claimEvent, ...events] : events;
      let next = this.current;
      const records: DecodedEvent[] = [];
      for (const event of all) ({ next } = this.fold(next, event, records));
      if (phase) ({ next } = this.fold(next, this.checkpointEvent(next, phase), records));
      try {
        await this.stream.append(this.current.version, records.map((record) => ({ id: record.id, type: record.type, data: record.data })));
        this.current = next;
        this.claimEvent = null;
        this.faults?.afterAppend(records);
        return;
      } catch (error) {
        if (!(error instanceof ConcurrencyError)) throw error;
        if (attempt >= 5) throw new FenceLostError(error.message);
        const wasClaimed = this.claimed;
        await this.refresh();
        if (!wasClaimed) throw new RunChangedError(`the run changed at version ${this.current.version} before this replica's claim`);
      }
    }
  }

  /** Folds what others appended since this replica last read the stream. */
  async refresh(): Promise<void> {
    for (const event of await this.stream.read(this.current.version + 1)) {
      if (this.claimed && !LEGACY_OPERATOR_TYPES.has(event.type)) {
        throw new FenceLostError(`${event.type} was appended by another writer at version ${event.streamVersion}`);
      }
      this.current = evolveRun(this.current, event);
    }
  }

  private fold(state: RunAggregate, event: RunEmit, into: DecodedEvent[]): { next: RunAggregate } {
    const decoded = { id: newEventId(), type: event.type, data: event.data, streamVersion: state.version + 1 } as DecodedEvent;
    into.push(decoded);
    return { next: evolveRun(state, decoded) };
  }

  private checkpointEvent(state: RunAggregate, phase: Phase): RunEmit {
    const digestOfState = stateDigest(state);
    const previousDigest = state.checkpoint?.digest ?? null;
    const bounds = state.started!.bounds;
    return {
      type: 'run.checkpoint',
      data: {
        seq: (state.checkpoint?.seq ?? 0) + 1,
        phase,
        iteration: state.iteration,
        toolCalls: state.toolCalls,
        costUsd: state.costUsd,
        remaining: {
          iterations: bounds.maxIterations - state.iteration,
          toolCalls: bounds.maxToolCalls - state.toolCalls,
          costUsd: state.costLimitUsd === null ? null : Math.max(0, state.costLimitUsd - state.costUsd),
          wallSeconds: Math.max(0, Math.round((Date.parse(state.started!.deadline) - this.now().getTime()) / 1000)),
        },
        stateDigest: digestOfState,
        previousDigest,
        digest: checkpointDigest(previousDigest, digestOfState),
      },
    };
  }
}
