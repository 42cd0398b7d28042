import { newEventId, type AttentionState, type AuthorizeResult, type DecodedEvent, type JsonValue } from '@packetagent/contracts';
import { ConcurrencyError } from '@packetagent/eventstore';
import type { ModelTurn } from '@packetagent/providers';
import { ToolAbortedError, type PlannedCall, type ToolOutcome } from '@packetagent/tools';
import type { BudgetPort, CredentialRefusal, CredentialsAnswer, EffectsPort, FaultPort, GuardPort, ModelPort, NewRunEvent, RaisedAttention, RunPorts, RunStreamPort, TimersPort } from '../execution/ports';
import type { BudgetAnswer, BudgetAsk, BudgetRaise, PlanRequest } from '../run/run.intent';

/**
 * The shell's ports in memory, for fast specs of the shell itself: a run stream that fences by
 * version, a scripted model, a guard and effects that answer what the spec says, a budget with a
 * limit. The production adapters are tested against the real services in the integration suites.
 */

export class MemoryRunStream implements RunStreamPort {
  readonly events: DecodedEvent[] = [];
  readonly controls: DecodedEvent[] = [];
  /** Thrown by the next append, once (an event the store refuses, say). */
  failNextAppend: Error | null = null;

  constructor(first: Array<{ type: string; data: unknown }>) {
    for (const event of first) this.push(this.events, event, { kind: 'service', id: 'intake' });
  }

  private push(into: DecodedEvent[], event: { id?: string; type: string; data: unknown }, actor: { kind: string; id: string }): void {
    into.push({ id: event.id ?? newEventId(), type: event.type, data: event.data, streamVersion: into.length + 1, actor, occurredAt: new Date().toISOString() } as unknown as DecodedEvent);
  }

  /** Another writer appends (a stale replica, say): the next fenced append of the shell fails. */
  appendAsOther(type: string, data: unknown): void {
    this.push(this.events, { type, data }, { kind: 'service', id: 'other-replica' });
  }

  requestControl(type: string, data: unknown): number {
    this.push(this.controls, { type, data }, { kind: 'user', id: 'operator' });
    return this.controls.length;
  }

  async read(fromVersion: number): Promise<DecodedEvent[]> {
    return this.events.slice(fromVersion - 1);
  }

  async append(expectedVersion: number, events: NewRunEvent[]): Promise<void> {
    if (this.failNextAppend) {
      const error = this.failNextAppend;
      this.failNextAppend = null;
      throw error;
    }
    if (expectedVersion !== this.events.length) throw new ConcurrencyError('run-run1', expectedVersion, this.events.length);
    for (const event of events) this.push(this.events, event, { kind: 'service', id: 'supervisor' });
  }

  async readControls(fromVersion: number): Promise<DecodedEvent[]> {
    return this.controls.slice(fromVersion - 1);
  }

  types(): string[] {
    return this.events.map((event) => event.type);
  }
}

export class ScriptedModel implements ModelPort {
  readonly requests: PlanRequest[] = [];

  constructor(
    private readonly turns: Array<Partial<ModelTurn>>,
    readonly free = true,
  ) {}

  estimateUsd(): number {
    return 0.01;
  }

  async complete(request: PlanRequest): Promise<ModelTurn> {
    this.requests.push(request);
    const turn = this.turns[request.iteration - 1];
    if (!turn) throw new Error(`the script has no turn ${request.iteration}`);
    return { provider: 'scripted', model: 'script', scripted: true, text: '', toolCalls: [], stopReason: 'tool_use', usage: { inputTokens: 10, outputTokens: 5 }, costUsd: 0, attempts: 1, durationMs: 1, native: null, ...turn } as ModelTurn;
  }
}

export class AnsweringGuard implements GuardPort {
  readonly asked: PlannedCall[] = [];
  readonly raised: Array<{ kind: string; details: JsonValue }> = [];

  constructor(private readonly answer: (planned: PlannedCall) => AuthorizeResult) {}

  async authorize(planned: PlannedCall): Promise<AuthorizeResult> {
    this.asked.push(planned);
    return this.answer(planned);
  }

  /** Credentials that need an operator, by name, and how the attention for each stands. */
  readonly refusing = new Map<string, { reason: string; attention: AttentionState }>();
  readonly reconnects: CredentialRefusal[] = [];

  async credentials(_decision: AuthorizeResult, planned: PlannedCall): Promise<CredentialsAnswer> {
    const refused = planned.credentials.find((credential) => this.refusing.has(credential));
    return refused ? { ok: false, refusal: { credential: refused, reason: this.refusing.get(refused)!.reason } } : { ok: true, values: {} };
  }

  async requestReconnect(_planned: PlannedCall, refusal: CredentialRefusal): Promise<RaisedAttention> {
    this.reconnects.push(refusal);
    return { attentionId: `reconnect-${refusal.credential}`, state: this.refusing.get(refusal.credential)?.attention ?? 'open' };
  }

  readonly budgetAsks: BudgetAsk[] = [];
  /** How each budget request's attention stands (`budget-<request>`); open when not set. */
  readonly budgetAnswers = new Map<string, BudgetAnswer>();

  async requestBudget(ask: BudgetAsk): Promise<RaisedAttention> {
    this.budgetAsks.push(ask);
    const attentionId = `budget-${ask.request}`;
    return { attentionId, state: this.budgetAnswers.get(attentionId)?.state ?? 'open' };
  }

  async budgetAnswer(attentionId: string): Promise<BudgetAnswer> {
    return this.budgetAnswers.get(attentionId) ?? { state: 'open', approvedBy: null, role: null };
  }

  async raiseAttention(kind: 'uncertain_effect' | 'run_unrecordable', _planned: PlannedCall | null, details: JsonValue): Promise<string | null> {
    this.raised.push({ kind, details });
    return `att-${this.raised.length}`;
  }
}

export class LimitedBudget implements BudgetPort {
  readonly reserved: string[] = [];
  readonly settled: string[] = [];
  readonly released: string[] = [];

  constructor(private readonly refuseUnits: ReadonlySet<string> = new Set()) {}

  async reserve(amounts: Array<{ unit: string; amount: number }>, key: string) {
    if (amounts.some((amount) => this.refuseUnits.has(amount.unit))) return { id: null, refused: { detail: `no budget for ${key}`, scope: null } } as const;
    this.reserved.push(key);
    return { id: `res-${key}`, refused: null } as const;
  }

  async settle(reservationId: string | null): Promise<void> {
    if (reservationId) this.settled.push(reservationId);
  }

  async release(reservationId: string | null): Promise<void> {
    if (reservationId) this.released.push(reservationId);
  }

  /** The run's limit as raised, once per attention, from `limitUsd`. */
  limitUsd = 0.5;
  readonly raises = new Map<string, BudgetRaise>();

  async raiseRunLimit(raise: { attentionId: string; amountMicroUsd: number }): Promise<BudgetRaise> {
    const earlier = this.raises.get(raise.attentionId);
    if (earlier) return earlier;
    this.limitUsd += raise.amountMicroUsd / 1_000_000;
    const answer = { raisedUsd: raise.amountMicroUsd / 1_000_000, limitUsd: this.limitUsd, cappedBy: null };
    this.raises.set(raise.attentionId, answer);
    return answer;
  }
}

/** Runs each call through `behave`; `hang` waits until the call is aborted, as a stuck far side would. */
export class RecordingEffects implements EffectsPort {
  readonly calls: Array<{ tool: string; idempotencyKey: string; computerGrant?: string }> = [];
  readonly abandoned: string[] = [];
  onCall: (() => void) | null = null;

  constructor(private readonly behave: (planned: PlannedCall) => ToolOutcome | 'hang') {}

  async execute(planned: PlannedCall, _authorization: unknown, call: { idempotencyKey: string; computerGrant?: string; signal: AbortSignal }): Promise<ToolOutcome> {
    this.calls.push({ tool: planned.tool, idempotencyKey: call.idempotencyKey, ...(call.computerGrant ? { computerGrant: call.computerGrant } : {}) });
    this.onCall?.();
    const outcome = this.behave(planned);
    if (outcome !== 'hang') return outcome;
    return new Promise((_resolve, reject) => {
      call.signal.addEventListener('abort', () => reject(new ToolAbortedError('aborted')), { once: true });
    });
  }

  async abandon(_planned: PlannedCall, idempotencyKey: string): Promise<void> {
    this.abandoned.push(idempotencyKey);
  }
}

export class RecordedTimers implements TimersPort {
  readonly set: string[] = [];
  cancelled = 0;

  async setWallTimer(deadline: string): Promise<void> {
    this.set.push(deadline);
  }

  async cancelWallTimer(): Promise<void> {
    this.cancelled += 1;
  }
}

export class CountingFaults implements FaultPort {
  readonly appended: string[] = [];

  afterAppend(events: ReadonlyArray<{ type: string }>): void {
    this.appended.push(...events.map((event) => event.type));
  }
}

export function memoryPorts(parts: { stream: MemoryRunStream; model: ModelPort; guard: GuardPort; budget?: BudgetPort; effects?: EffectsPort; timers?: TimersPort; faults?: FaultPort; now?: () => Date }): RunPorts {
  return {
    stream: parts.stream,
    model: parts.model,
    guard: parts.guard,
    budget: parts.budget ?? new LimitedBudget(),
    effects: parts.effects ?? new RecordingEffects(() => ({ ok: true, output: 'done', summary: 'done' })),
    timers: parts.timers ?? new RecordedTimers(),
    faults: parts.faults ?? null,
    now: parts.now ?? (() => new Date()),
    log: () => undefined,
  };
}
