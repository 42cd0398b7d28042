import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import Ajv from 'ajv';
import { z } from 'zod';
import {
  BudgetCommands,
  canonicalJson,
  DomainError,
  MICRO_USD_PER_USD,
  newEventId,
  openSealedCredential,
  PolicyCommands,
  recipientKeyPair,
  redactResource,
  RUN_WALL_TIME_PURPOSE,
  SchedulerCommands,
  sha256Hex,
  VaultCommands,
  type AuthorizeResult,
  type DecodedEvent,
  type JsonObject,
  type JsonValue,
  type RunExecutionEventData,
  type RunExecutionEventType,
  type WorkerDefinition,
} from '@packetagent/contracts';
import { ConcurrencyError } from '@packetagent/eventstore';
import type { ChatMessage, ModelRequest, ModelTurn, ResolvedModel } from '@packetagent/providers';
import { ToolAbortedError, ToolArgumentsError, type PlannedCall, type ToolOutcome } from '@packetagent/tools';
import type { ExecutionDeps } from './execution-deps';
import { RunInterruptedError, throwIfAborted, withRetries } from './retry';
import { checkpointDigest, evolveRun, messagesToDrop, stateDigest, type EffectRecord, type PendingCall, type RunAggregate } from '../run/run.state';

export const SUPERVISOR_ACTOR = { kind: 'service', id: 'supervisor' } as const;

/** Another writer took the run: this replica stops working on it at once. */
export class FenceLostError extends DomainError {
  readonly code = 'run_fence_lost';
}

type Emit = { [K in RunExecutionEventType]: { type: K; data: RunExecutionEventData<K> } }[RunExecutionEventType] | { type: 'run.cancelled' | 'run.revoked'; data: { reason: string } };

export type DriveOutcome = { status: 'terminal' } | { status: 'waiting'; waitingOn: string | null } | { status: 'interrupted'; reason: string };

/** What a checkpointed phase ends with. */
type Phase = 'plan' | 'act';

const OPERATOR_TYPES = new Set(['run.stop_requested', 'run.pause_requested', 'run.resume_requested']);
const RESULT_OUTPUT_CHARS = 32 * 1024;

const FinishArgs = z.object({
  summary: z.string().min(1),
  output: z.json().optional(),
  criteria: z.array(z.object({ criterion: z.string(), met: z.boolean(), evidence: z.string().optional() })).optional(),
});
const AskOwnerArgs = z.object({ question: z.string().min(1) });
const ProposeCriteriaArgs = z.object({ criteria: z.array(z.string().min(1).max(1000)).min(1).max(50) });
const UpdateCriteriaArgs = ProposeCriteriaArgs.extend({ reason: z.string().min(1).max(1000) });

const ajv = new Ajv({ allErrors: true, strict: false });

function bounded(value: JsonValue): JsonValue {
  const text = typeof value === 'string' ? value : canonicalJson(value);
  return text.length <= RESULT_OUTPUT_CHARS ? value : `${text.slice(0, RESULT_OUTPUT_CHARS)}… [truncated ${text.length - RESULT_OUTPUT_CHARS} characters]`;
}

function estimateTokens(system: string, messages: ChatMessage[]): number {
  let chars = system.length;
  for (const message of messages) {
    if (message.role === 'tool') for (const result of message.results) chars += result.content.length + 20;
    else chars += message.content.length + (message.role === 'assistant' ? message.toolCalls.reduce((sum, call) => sum + call.rawArguments.length + call.name.length, 0) : 0);
  }
  return Math.ceil(chars / 4);
}

/**
 * One replica's turn at driving one run: plan (a model turn) → act (each tool call through
 * policy, budget and the effect log) → checkpoint → decide, until the run ends, waits for a
 * person, or is interrupted. Every fact goes to the run's stream before it is acted on, at the
 * version this replica read: if anyone else wrote meanwhile, the append fails and we stop.
 */
export class RunExecution {
  private readonly stream: string;
  private controller = new AbortController();
  private interruptReason: string | null = null;

  constructor(
    private readonly deps: ExecutionDeps,
    private state: RunAggregate,
    private readonly definition: WorkerDefinition,
    private readonly model: ResolvedModel,
    private readonly claim: number,
  ) {
    this.stream = `run-${state.runId}`;
  }

  get runState(): RunAggregate {
    return this.state;
  }

  /** Cuts the call in flight; the loop then re-reads the run and honours the reason (stop, pause, deadline...). */
  interrupt(reason: string): void {
    this.interruptReason = reason;
    this.controller.abort(reason);
  }

  private get signal(): AbortSignal {
    return this.controller.signal;
  }

  private get bounds() {
    return this.state.started!.bounds;
  }

  private get deadline(): number {
    return Date.parse(this.state.started!.deadline);
  }

  async drive(input: JsonValue): Promise<DriveOutcome> {
    this.taskMessage = ['Input:', input === null || input === undefined ? '(none)' : typeof input === 'string' ? input : JSON.stringify(input, null, 2)].join('\n');
    await this.begin();
    // The deadline cuts a call in flight; between steps it is checked anyway.
    const untilDeadline = Math.max(0, this.deadline - this.deps.now().getTime());
    const deadlineTimer = setTimeout(() => this.interrupt('deadline'), Math.min(untilDeadline, 2_147_483_647));
    try {
      return await this.loop();
    } finally {
      clearTimeout(deadlineTimer);
    }
  }

  private async loop(): Promise<DriveOutcome> {
    for (;;) {
      try {
        const outcome = await this.step();
        if (outcome) return outcome;
      } catch (error) {
        if (error instanceof FenceLostError) return { status: 'interrupted', reason: error.message };
        if (!(error instanceof RunInterruptedError || error instanceof ToolAbortedError || this.signal.aborted)) throw error;
        const reason = this.interruptReason ?? 'interrupted';
        if (reason === 'lease_lost' || reason === 'shutdown') return { status: 'interrupted', reason };
        // Stop, pause or the deadline: read what the operator recorded, then decide with a fresh signal.
        this.controller = new AbortController();
        this.interruptReason = null;
        try {
          await this.refresh();
        } catch (refreshError) {
          if (refreshError instanceof FenceLostError) return { status: 'interrupted', reason: refreshError.message };
          throw refreshError;
        }
      }
    }
  }

  // ------------------------------------------------------------------------------------------
  // Start and claim

  private async begin(): Promise<void> {
    const fromCheckpoint = this.state.checkpoint?.version ?? null;
    const claimed: Emit = { type: 'run.claimed', data: { replica: this.deps.options.replicaId, claim: this.claim, fromCheckpoint } };
    if (this.state.started) {
      await this.commit([claimed]);
      return;
    }
    const { definition } = this;
    const startedAt = this.deps.now();
    const deadline = new Date(startedAt.getTime() + definition.bounds.maxWallSeconds * 1000).toISOString();
    await this.commit([
      claimed,
      {
        type: 'run.started',
        data: {
          model: { provider: this.model.provider, model: this.model.model, scripted: this.model.scripted },
          bounds: {
            maxWallSeconds: definition.bounds.maxWallSeconds,
            maxIterations: definition.bounds.maxIterations,
            maxToolCalls: definition.bounds.maxToolCalls,
            maxCostUsd: definition.budgets.perRunUsd ?? null,
          },
          deadline,
          exit: 'finish' in definition.exit ? 'finish' : 'output_schema',
          tools: definition.tools.map((grant) => grant.tool),
        },
      },
      ...('finish' in definition.exit && definition.exit.finish.criteria.length > 0
        ? [{ type: 'run.criteria_set' as const, data: { criteria: definition.exit.finish.criteria, reason: 'declared by the worker', callId: 'definition' } }]
        : []),
    ]);
    await withRetries(
      () =>
        this.deps.commands.request(SchedulerCommands.setTimer, {
          workspaceId: this.state.workspaceId,
          timerId: `run-wall-${this.state.runId}`,
          purpose: RUN_WALL_TIME_PURPOSE,
          dueAt: deadline,
          payload: { runId: this.state.runId },
          actor: SUPERVISOR_ACTOR,
        }),
      this.signal,
    ).catch((error: unknown) => {
      // Between steps the deadline is checked anyway; the timer only wakes a parked run.
      this.deps.options.log('warn', 'wall-time timer not set', { runId: this.state.runId, error: error instanceof Error ? error.message : String(error) });
    });
  }

  private taskMessage = '';
  /** The run's directory, created at its first tool call in this drive. */
  private workDirReady: Promise<unknown> | null = null;

  // ------------------------------------------------------------------------------------------
  // The loop

  /** One decision; answers an outcome when the drive is over for now. */
  private async step(): Promise<DriveOutcome | null> {
    const state = this.state;
    if (state.status === 'terminal') return { status: 'terminal' };
    if (state.stopRequested) return this.end({ type: 'run.cancelled', data: { reason: state.stopRequested.reason ?? 'stopped by an operator' } });
    if (this.deps.now().getTime() >= this.deadline) return this.end({ type: 'run.timed_out', data: { deadline: this.state.started!.deadline } });
    if (state.waiting?.reason === 'paused') {
      if (state.pauseRequested) return { status: 'waiting', waitingOn: null };
      await this.commit([{ type: 'run.resumed', data: { reason: 'resume_requested' } }]);
      return null;
    }
    if (state.pauseRequested) {
      await this.commit([{ type: 'run.waiting', data: { reason: 'paused', attentionId: null, callId: null } }]);
      return { status: 'waiting', waitingOn: null };
    }
    if (state.costUsd > 0 && this.bounds.maxCostUsd !== null && state.costUsd >= this.bounds.maxCostUsd) {
      return this.end({ type: 'run.budget_exhausted', data: { detail: `the run has spent $${state.costUsd.toFixed(6)} of its $${this.bounds.maxCostUsd} limit`, scope: null } });
    }
    const next = state.pending[0];
    return next ? this.act(next) : this.plan();
  }

  // ------------------------------------------------------------------------------------------
  // Plan: one model turn

  private systemPrompt(): string {
    const exit =
      'finish' in this.definition.exit
        ? 'When the task is done, call the `finish` tool with a summary' +
          (this.state.criteria.length ? ` and, for each done-criterion, whether it is met:\n${this.state.criteria.map((c) => `- ${c}`).join('\n')}` : '.')
        : `When the task is done, call the \`finish\` tool with \`output\` matching this JSON Schema:\n${JSON.stringify((this.definition.exit as { outputSchema: JsonObject }).outputSchema)}`;
    return `${this.definition.instructions}\n\n${exit}`;
  }

  private requestMessages(): ChatMessage[] {
    const task = this.taskMessage;
    const messages: ChatMessage[] = [{ role: 'user', content: task }, ...this.state.messages];
    const last = messages[messages.length - 1];
    if (last?.role === 'assistant' && last.toolCalls.length === 0) {
      messages.push({ role: 'user', content: 'Continue with the task. Call `finish` when it is done.' });
    }
    return messages;
  }

  private async plan(): Promise<DriveOutcome | null> {
    const state = this.state;
    if (state.iteration >= this.bounds.maxIterations) {
      return this.end({ type: 'run.failed', data: { reason: 'iteration_limit', detail: `the run used all ${this.bounds.maxIterations} iterations` } });
    }
    const system = this.systemPrompt();
    let messages = this.requestMessages();
    const window = this.model.entry.contextWindow;
    const maxOutputTokens = Math.min(
      'maxOutputTokens' in this.definition.model && this.definition.model.maxOutputTokens ? this.definition.model.maxOutputTokens : 4_096,
      this.model.entry.maxOutputTokens,
    );
    let tokens = estimateTokens(system, messages) + maxOutputTokens;
    if (tokens > window * this.deps.options.compactAtRatio) {
      const keep = Math.max(2, Math.floor(state.messages.length / 2));
      const drop = messagesToDrop(state.messages, keep);
      if (drop > 0) {
        await this.commit([{ type: 'run.compacted', data: { droppedMessages: drop, estimatedTokens: tokens } }]);
        messages = this.requestMessages();
        tokens = estimateTokens(system, messages) + maxOutputTokens;
      }
      if (tokens > window) {
        return this.end({ type: 'run.failed', data: { reason: 'context_exhausted', detail: `about ${tokens} tokens needed, the model's window is ${window}` } });
      }
    }
    const outputSchema = 'outputSchema' in this.definition.exit ? this.definition.exit.outputSchema : undefined;
    const request: ModelRequest = {
      model: this.model,
      system,
      messages,
      tools: this.deps.registry.describe(this.definition.tools.map((grant) => grant.tool)),
      maxOutputTokens,
      turn: state.iteration,
      ...(outputSchema && this.model.entry.capabilities.structuredOutput ? { outputSchema } : {}),
    };
    const iteration = state.iteration + 1;
    // A model priced at zero (a local server, a free script) can exceed no limit: nothing to reserve.
    const pricing = this.model.entry.pricing;
    const free = pricing.inputPerMTokUsd === 0 && pricing.outputPerMTokUsd === 0;
    const estimate = this.deps.router.estimateCostUsd(request);
    const reservation = free
      ? { id: null, refused: null, scope: null }
      : await this.reserve([{ unit: 'usd', amount: Math.max(1, Math.ceil(estimate * MICRO_USD_PER_USD)) }], `model:${iteration}:${this.claim}`);
    if (reservation.refused) return this.end({ type: 'run.budget_exhausted', data: { detail: reservation.refused, scope: reservation.scope } });

    let turn: ModelTurn;
    try {
      turn = await this.deps.router.complete(request, { signal: this.signal });
    } catch (error) {
      await this.release(reservation.id);
      if (this.signal.aborted) throw new RunInterruptedError(String(this.signal.reason));
      const detail = error instanceof Error ? error.message : String(error);
      return this.end({ type: 'run.failed', data: { reason: 'model_error', detail: detail.slice(0, 2_000) } });
    }
    await this.settle(reservation.id, [{ unit: 'usd', amount: Math.round(turn.costUsd * MICRO_USD_PER_USD) }]);

    const events: Emit[] = [
      {
        type: 'run.model_turn',
        data: {
          iteration,
          model: { provider: turn.provider, model: turn.model, scripted: turn.scripted },
          text: turn.text,
          toolCalls: turn.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments, ...(call.malformed ? { malformed: call.malformed.slice(0, 1_000) } : {}) })),
          stopReason: turn.stopReason,
          usage: turn.usage,
          costUsd: turn.costUsd,
          attempts: turn.attempts,
          durationMs: Math.round(turn.durationMs),
          native: turn.native as unknown as JsonValue,
        },
      },
    ];
    if (turn.toolCalls.length === 0) {
      const finished = outputSchema ? this.outputFromText(turn.text, outputSchema) : null;
      if (finished) {
        events.push({ type: 'run.succeeded', data: { summary: 'the final answer matches the output schema', output: finished } });
        await this.commit(events);
        await this.afterTerminal();
        return { status: 'terminal' };
      }
      if (state.stalledTurns + 1 >= this.deps.options.stallTurns) {
        events.push({ type: 'run.failed', data: { reason: 'stalled', detail: `${this.deps.options.stallTurns} model turns in a row made no progress` } });
        await this.commit(events);
        await this.afterTerminal();
        return { status: 'terminal' };
      }
    }
    await this.commit(events, 'plan');
    return null;
  }

  private outputFromText(text: string, schema: JsonObject): JsonValue | null {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text.trim());
    } catch {
      return null;
    }
    return ajv.validate(schema, parsed) ? (parsed as JsonValue) : null;
  }

  // ------------------------------------------------------------------------------------------
  // Act: one tool call

  private async act(call: PendingCall): Promise<DriveOutcome | null> {
    const uncertain = Object.values(this.state.effects).find((effect) => effect.callId === call.callId && effect.outcome === 'prepared');
    if (call.malformed || !call.arguments) {
      if (this.state.malformedTurns >= 2) {
        return this.end({ type: 'run.failed', data: { reason: 'model_error', detail: 'the model sent malformed tool arguments again after a correction' } });
      }
      return this.answer(call, { ok: false, output: `Your arguments for ${call.name} were not a JSON object (${call.malformed ?? 'missing'}). Nothing was executed; call the tool again with valid arguments.`, summary: 'malformed arguments: correction sent' }, false);
    }
    let planned: PlannedCall;
    try {
      planned = this.deps.registry.plan(call.callId, call.name, call.arguments);
    } catch (error) {
      if (!(error instanceof ToolArgumentsError)) throw error;
      return this.answer(call, { ok: false, output: `${error.message}. Nothing was executed; call the tool again with valid arguments.`, summary: 'invalid arguments: correction sent' }, false);
    }
    if (planned.control) return this.control(call, planned);
    if (uncertain) return this.recoverEffect(call, planned, uncertain);
    if (this.state.toolCalls >= this.bounds.maxToolCalls) {
      return this.end({ type: 'run.failed', data: { reason: 'tool_call_limit', detail: `the run used all ${this.bounds.maxToolCalls} tool calls` } });
    }

    const decision = await this.authorize(planned);
    const decided = this.decisionEvent(planned, decision);
    const resumed: Emit[] = this.state.waiting ? [{ type: 'run.resumed', data: { reason: decision.reason.code } }] : [];
    if (decision.decision === 'approval_required') return this.awaitApproval(call, decision, decided, 'approval');
    if (decision.decision === 'deny') return this.denied(call, planned, decision, decided, resumed);

    const credentials = await this.resolveCredentials(decision);
    const authorization = { decision: decision.decision, tool: planned.tool, verb: planned.verb, resource: planned.resource, callDigest: planned.callDigest };
    if (!planned.mutating) {
      await this.commit([...resumed, decided]);
      const outcome = await this.execute(planned, authorization, credentials, `${this.state.runId}:${call.callId}`);
      return this.answer(call, outcome, true);
    }

    const action = await this.reserve([{ unit: `count:${planned.tool}`, amount: 1 }], `action:${call.callId}`);
    if (action.refused) {
      await this.commit([...resumed, decided]);
      return this.end({ type: 'run.budget_exhausted', data: { detail: action.refused, scope: action.scope } });
    }
    const effect: EffectRecord = {
      effectId: `${this.state.runId}:${call.callId}`,
      callId: call.callId,
      tool: planned.tool,
      verb: planned.verb,
      resource: planned.resource === null ? null : redactResource(planned.resource),
      idempotencyKey: `${this.state.runId}:${call.callId}`,
      requestDigest: sha256Hex(canonicalJson({ tool: planned.tool, verb: planned.verb, resource: planned.resource, args: planned.redactedArgs })),
      idempotentByKey: planned.idempotentByKey,
      attempt: 1,
      outcome: 'prepared',
    };
    await this.commit([...resumed, decided, this.preparedEvent(effect)]);
    return this.performEffect(call, planned, authorization, credentials, effect, action.id);
  }

  /** Parks the run until the person answers; a run already parked on the same request stays as it is. */
  private async awaitApproval(call: PendingCall, decision: AuthorizeResult, decided: Emit, reason: 'approval' | 'question'): Promise<DriveOutcome> {
    const attentionId = decision.approvalId ?? null;
    if (this.state.waiting && this.state.waiting.attentionId === attentionId) return { status: 'waiting', waitingOn: attentionId };
    await this.commit([decided, { type: 'run.waiting', data: { reason, attentionId, callId: call.callId } }]);
    return { status: 'waiting', waitingOn: attentionId };
  }

  private preparedEvent(effect: EffectRecord): Emit {
    const { outcome: _outcome, ...data } = effect;
    return { type: 'effect.prepared', data };
  }

  private async performEffect(
    call: PendingCall,
    planned: PlannedCall,
    authorization: { decision: AuthorizeResult['decision']; tool: string; verb: string; resource: string | null; callDigest: string },
    credentials: Record<string, string>,
    effect: EffectRecord,
    reservationId: string | null,
  ): Promise<DriveOutcome | null> {
    let outcome: ToolOutcome;
    try {
      outcome = await this.execute(planned, authorization, credentials, effect.idempotencyKey);
    } catch (error) {
      if (error instanceof ToolAbortedError || this.signal.aborted) {
        // Cut off mid-call: whether the far side acted is not known, and the record says so.
        await this.commit(
          [
            { type: 'effect.failed', data: { effectId: effect.effectId, callId: call.callId, error: { code: 'interrupted', message: 'the call was interrupted' }, outcomeKnown: false } },
            { type: 'run.tool_result', data: { callId: call.callId, tool: planned.tool, ok: false, output: 'The call was interrupted; its outcome is not known.', summary: 'interrupted', executed: true } },
          ],
          this.phaseEnd(),
        );
        await this.release(reservationId);
        throw new RunInterruptedError(String(this.signal.reason ?? 'interrupted'));
      }
      throw error;
    }
    const receipt: Emit = outcome.ok
      ? { type: 'effect.completed', data: { effectId: effect.effectId, callId: call.callId, summary: outcome.summary.slice(0, 1_000) } }
      : { type: 'effect.failed', data: { effectId: effect.effectId, callId: call.callId, error: outcome.error ?? { code: 'failed', message: outcome.summary }, outcomeKnown: true } };
    await this.commit([receipt, this.resultEvent(call, planned.tool, outcome, true)], this.phaseEnd(call));
    if (outcome.ok) await this.settle(reservationId, [{ unit: `count:${planned.tool}`, amount: 1 }]);
    else await this.release(reservationId);
    return null;
  }

  /**
   * A call whose effect was prepared and never recorded done: the replica that made it died in
   * between. Repeating it is safe only when the far side applies the idempotency key once.
   */
  private async recoverEffect(call: PendingCall, planned: PlannedCall, effect: EffectRecord): Promise<DriveOutcome | null> {
    const evidence = {
      effectId: effect.effectId,
      callId: effect.callId,
      tool: effect.tool,
      verb: effect.verb,
      resource: effect.resource,
      idempotencyKey: effect.idempotencyKey,
      requestDigest: effect.requestDigest,
    };
    if (!effect.idempotentByKey) {
      const attentionId = await this.raiseUncertainEffect(planned, effect);
      return this.end({
        type: 'run.abandoned',
        data: {
          cause: 'uncertain_effect',
          detail: `${effect.tool} ${effect.verb} was prepared and its outcome never recorded; it is not idempotent by key, so it is not repeated`,
          effect: evidence,
          attentionId,
        },
      });
    }
    const decision = await this.authorize(planned);
    const decided = this.decisionEvent(planned, decision);
    const resumed: Emit[] = this.state.waiting ? [{ type: 'run.resumed', data: { reason: decision.reason.code } }] : [];
    if (decision.decision === 'approval_required') return this.awaitApproval(call, decision, decided, 'approval');
    if (decision.decision === 'deny') return this.denied(call, planned, decision, decided, resumed);
    const credentials = await this.resolveCredentials(decision);
    const retry: EffectRecord = { ...effect, attempt: effect.attempt + 1 };
    await this.commit([...resumed, decided, this.preparedEvent(retry)]);
    const authorization = { decision: decision.decision, tool: planned.tool, verb: planned.verb, resource: planned.resource, callDigest: planned.callDigest };
    return this.performEffect(call, planned, authorization, credentials, retry, null);
  }

  private async raiseUncertainEffect(planned: PlannedCall, effect: EffectRecord): Promise<string | null> {
    try {
      const raised = await withRetries(
        () =>
          this.deps.commands.request(PolicyCommands.raiseAttention, {
            workspaceId: this.state.workspaceId,
            runId: this.state.runId,
            kind: 'uncertain_effect',
            tool: planned.tool,
            verb: planned.verb,
            resource: planned.resource,
            arguments: { effectId: effect.effectId, idempotencyKey: effect.idempotencyKey, requestDigest: effect.requestDigest, request: planned.redactedArgs },
          }),
        this.signal,
      );
      return raised.id;
    } catch (error) {
      this.deps.options.log('error', 'could not raise attention for an uncertain effect', { runId: this.state.runId, error: error instanceof Error ? error.message : String(error) });
      return null;
    }
  }

  private async denied(call: PendingCall, planned: PlannedCall, decision: AuthorizeResult, decided: Emit, resumed: Emit[]): Promise<DriveOutcome | null> {
    const code = decision.reason.code;
    const attentionId = this.state.waiting?.attentionId ?? decision.approvalId ?? 'unknown';
    if (code === 'deployment_revoked' || code === 'approval_withdrawn') {
      await this.commit([...resumed, decided]);
      return this.end({ type: 'run.revoked', data: { reason: decision.reason.text } });
    }
    if (code === 'approval_rejected' && planned.tool !== 'ask_owner') {
      await this.commit([...resumed, decided]);
      return this.end({ type: 'run.rejected', data: { attentionId, reason: decision.reason.text } });
    }
    if (code === 'approval_expired' && planned.tool !== 'ask_owner') {
      await this.commit([...resumed, decided]);
      return this.end({ type: 'run.expired', data: { attentionId } });
    }
    const output = planned.tool === 'ask_owner' ? { answered: false, reason: decision.reason.text } : `Denied by policy (${code}): ${decision.reason.text}`;
    return this.answer(call, { ok: false, output, summary: `denied: ${code}` }, false, [...resumed, decided]);
  }

  private async control(call: PendingCall, planned: PlannedCall): Promise<DriveOutcome | null> {
    const args = call.arguments ?? {};
    switch (planned.tool) {
      case 'finish':
        return this.finish(call, FinishArgs.parse(args));
      case 'propose_criteria': {
        const { criteria } = ProposeCriteriaArgs.parse(args);
        if (this.state.criteria.length > 0) {
          return this.answer(call, { ok: false, output: 'Done-criteria are already set; use update_criteria with a reason to change them.', summary: 'criteria already set' }, false);
        }
        return this.answer(call, { ok: true, output: { criteria }, summary: `${criteria.length} criteria proposed` }, false, [], [
          { type: 'run.criteria_set', data: { criteria, reason: null, callId: call.callId } },
        ]);
      }
      case 'update_criteria': {
        const { criteria, reason } = UpdateCriteriaArgs.parse(args);
        return this.answer(call, { ok: true, output: { criteria }, summary: `criteria updated: ${reason.slice(0, 200)}` }, false, [], [
          { type: 'run.criteria_set', data: { criteria, reason, callId: call.callId } },
        ]);
      }
      case 'ask_owner': {
        AskOwnerArgs.parse(args);
        const decision = await this.authorize(planned);
        const decided = this.decisionEvent(planned, decision);
        const resumed: Emit[] = this.state.waiting ? [{ type: 'run.resumed', data: { reason: decision.reason.code } }] : [];
        if (decision.decision === 'approval_required') return this.awaitApproval(call, decision, decided, 'question');
        if (decision.decision === 'deny') return this.denied(call, planned, decision, decided, resumed);
        return this.answer(call, { ok: true, output: { answered: true, approved: true, reason: decision.reason.text }, summary: 'the owner approved' }, false, [...resumed, decided]);
      }
      default:
        return this.answer(call, { ok: false, output: `${planned.tool} is not a control tool`, summary: 'unknown control tool' }, false);
    }
  }

  private async finish(call: PendingCall, args: z.infer<typeof FinishArgs>): Promise<DriveOutcome | null> {
    const problems: string[] = [];
    if ('outputSchema' in this.definition.exit) {
      if (args.output === undefined) problems.push('`output` is required and must match the output schema');
      else if (!ajv.validate(this.definition.exit.outputSchema, args.output)) problems.push(`output does not match the schema: ${ajv.errorsText(ajv.errors)}`);
    } else if (this.state.criteria.length > 0) {
      const reported = new Map((args.criteria ?? []).map((entry) => [entry.criterion.trim(), entry]));
      for (const criterion of this.state.criteria) {
        const entry = reported.get(criterion.trim());
        if (!entry) problems.push(`criterion not reported: "${criterion}"`);
        else if (!entry.met) problems.push(`criterion not met: "${criterion}"`);
      }
    }
    if (problems.length > 0) {
      return this.answer(call, { ok: false, output: `Not finished: ${problems.join('; ')}. Keep working, then call finish again.`, summary: 'finish refused' }, false);
    }
    const output = (args.output ?? null) as JsonValue;
    await this.commit([
      { type: 'run.tool_result', data: { callId: call.callId, tool: 'finish', ok: true, output: 'finished', summary: 'finished', executed: false } },
      { type: 'run.succeeded', data: { summary: args.summary.slice(0, 4_000), output } },
    ]);
    await this.afterTerminal();
    return { status: 'terminal' };
  }

  // ------------------------------------------------------------------------------------------
  // Guardrail calls

  private async authorize(planned: PlannedCall): Promise<AuthorizeResult> {
    return withRetries(async () => {
      const result = await this.deps.commands.request(PolicyCommands.authorize, {
        workspaceId: this.state.workspaceId,
        runId: this.state.runId,
        tool: planned.tool,
        verb: planned.verb,
        resource: planned.resource,
        credentials: planned.credentials,
        callDigest: planned.callDigest,
        arguments: planned.redactedArgs,
      });
      // Policy follows run.admitted from the bus; a run it has not seen yet is not a deny.
      if (result.decision === 'deny' && (result.reason.code === 'unknown_run' || result.reason.code === 'grants_unavailable')) {
        throw new PolicyNotReadyError(result.reason.text);
      }
      return result;
    }, this.signal, 20_000).catch((error: unknown) => {
      if (error instanceof PolicyNotReadyError) return { decision: 'deny', reason: { code: 'unknown_run', text: error.message } } as AuthorizeResult;
      throw error;
    });
  }

  private decisionEvent(planned: PlannedCall, decision: AuthorizeResult): Emit {
    return {
      type: 'run.tool_decided',
      data: {
        callId: planned.callId,
        tool: planned.tool,
        verb: planned.verb,
        resource: planned.resource === null ? null : redactResource(planned.resource),
        callDigest: planned.callDigest,
        decision: decision.decision,
        reason: decision.reason,
        attentionId: decision.approvalId ?? null,
      },
    };
  }

  private async resolveCredentials(decision: AuthorizeResult): Promise<Record<string, string>> {
    const values: Record<string, string> = {};
    for (const grant of decision.credentialGrants ?? []) {
      const keys = recipientKeyPair();
      const resolved = await withRetries(
        () => this.deps.commands.request(VaultCommands.resolve, { grant: grant.token, recipientPublicKey: keys.publicKey }),
        this.signal,
      );
      values[grant.credential] = openSealedCredential(resolved.sealed, keys.privateKey);
    }
    return values;
  }

  private async reserve(
    amounts: Array<{ unit: string; amount: number }>,
    key: string,
  ): Promise<{ id: string | null; refused: string | null; scope: JsonValue | null }> {
    const result = await withRetries(
      () =>
        this.deps.commands.request(BudgetCommands.reserve, {
          workspaceId: this.state.workspaceId,
          runId: this.state.runId,
          amounts,
          ttlSeconds: 900,
          idempotencyKey: `${this.state.runId}:${key}`,
          actor: SUPERVISOR_ACTOR,
        }),
      this.signal,
      30_000,
    );
    if (result.state === 'refused') {
      const scope = result.scope;
      return {
        id: null,
        refused: `${scope.kind} ${scope.id} ${scope.unit} (${scope.window}): limit ${result.limit}, spent ${result.spent}, held ${result.held}, asked ${result.requested} (${result.reason})`,
        scope: scope as unknown as JsonValue,
      };
    }
    return { id: result.reservationId, refused: null, scope: null };
  }

  private async settle(reservationId: string | null, actual: Array<{ unit: string; amount: number }>): Promise<void> {
    if (!reservationId) return;
    await withRetries(
      () => this.deps.commands.request(BudgetCommands.settle, { workspaceId: this.state.workspaceId, reservationId, actual, actor: SUPERVISOR_ACTOR }),
      new AbortController().signal,
    );
  }

  private async release(reservationId: string | null): Promise<void> {
    if (!reservationId) return;
    await withRetries(
      () => this.deps.commands.request(BudgetCommands.release, { workspaceId: this.state.workspaceId, reservationId, actor: SUPERVISOR_ACTOR }),
      new AbortController().signal,
    ).catch((error: unknown) => {
      // An unreleased hold expires at its TTL; the ledger never credits twice.
      this.deps.options.log('warn', 'reservation not released', { reservationId, error: error instanceof Error ? error.message : String(error) });
    });
  }

  private async execute(
    planned: PlannedCall,
    authorization: { decision: AuthorizeResult['decision']; tool: string; verb: string; resource: string | null; callDigest: string },
    credentials: Record<string, string>,
    idempotencyKey: string,
  ): Promise<ToolOutcome> {
    throwIfAborted(this.signal);
    const workDir = join(this.deps.options.dataDir, 'runs', this.state.runId, 'workspace');
    this.workDirReady ??= mkdir(workDir, { recursive: true });
    await this.workDirReady;
    return this.deps.registry.execute(planned, authorization, {
      workspaceId: this.state.workspaceId,
      runId: this.state.runId,
      workDir,
      idempotencyKey,
      credentials,
      signal: this.signal,
    });
  }

  // ------------------------------------------------------------------------------------------
  // Recording

  private resultEvent(call: PendingCall, tool: string, outcome: Pick<ToolOutcome, 'ok' | 'output' | 'summary'>, executed: boolean): Emit {
    return {
      type: 'run.tool_result',
      data: { callId: call.callId, tool, ok: outcome.ok, output: bounded(outcome.output), summary: outcome.summary.slice(0, 1_000), executed },
    };
  }

  /** The last pending call's result ends the act phase: it carries a checkpoint. */
  private phaseEnd(call?: PendingCall): Phase | undefined {
    const remaining = this.state.pending.filter((pending) => pending.callId !== call?.callId);
    return remaining.length === 0 || !call ? 'act' : undefined;
  }

  private async answer(call: PendingCall, outcome: Pick<ToolOutcome, 'ok' | 'output' | 'summary'>, executed: boolean, before: Emit[] = [], after: Emit[] = []): Promise<null> {
    await this.commit([...before, ...after, this.resultEvent(call, call.name, outcome, executed)], this.phaseEnd(call));
    return null;
  }

  private async end(event: Emit): Promise<DriveOutcome> {
    await this.commit([event]);
    await this.afterTerminal();
    return { status: 'terminal' };
  }

  private async afterTerminal(): Promise<void> {
    await this.deps.commands
      .request(SchedulerCommands.cancelTimer, { workspaceId: this.state.workspaceId, timerId: `run-wall-${this.state.runId}`, reason: 'run ended', actor: SUPERVISOR_ACTOR })
      .catch(() => undefined);
  }

  /** Reads what others appended to the run (operator requests) and folds it in. */
  private async refresh(): Promise<void> {
    const events = await this.deps.readRun(this.state.runId, this.state.version + 1);
    for (const event of events) {
      if (!OPERATOR_TYPES.has(event.type)) throw new FenceLostError(`${event.type} was appended by another writer at version ${event.streamVersion}`);
      evolveRun(this.state, event);
    }
  }

  /**
   * Appends `events` (and a checkpoint closing `phase`) at the version this replica knows. When
   * only operator requests got in between, they are folded in and the append is tried again;
   * anything else means another writer has the run, and this replica stops.
   */
  private async commit(events: Emit[], phase?: Phase): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const next = structuredClone(this.state);
      const expected = next.version;
      const records = events.map((event) => this.fold(next, event));
      if (phase) records.push(this.fold(next, this.checkpointEvent(next, phase)));
      try {
        await this.deps.store.append(this.stream, expected, records.map((record) => ({ id: record.id, type: record.type, data: record.data, actor: SUPERVISOR_ACTOR })), {
          workspaceId: this.state.workspaceId,
        });
        this.state = next;
        if (this.deps.options.crashAfter) crashIfDue(this.deps.options.crashAfter, records);
        return;
      } catch (error) {
        if (!(error instanceof ConcurrencyError) || attempt >= 5) {
          if (error instanceof ConcurrencyError) throw new FenceLostError(error.message);
          throw error;
        }
        await this.refresh();
      }
    }
  }

  private fold(state: RunAggregate, event: Emit): DecodedEvent {
    const decoded = { id: newEventId(), type: event.type, data: event.data, streamVersion: state.version + 1 } as DecodedEvent;
    evolveRun(state, decoded);
    return decoded;
  }

  private checkpointEvent(state: RunAggregate, phase: Phase): Emit {
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
          costUsd: bounds.maxCostUsd === null ? null : Math.max(0, bounds.maxCostUsd - state.costUsd),
          wallSeconds: Math.max(0, Math.round((Date.parse(state.started!.deadline) - this.deps.now().getTime()) / 1000)),
        },
        stateDigest: digestOfState,
        previousDigest,
        digest: checkpointDigest(previousDigest, digestOfState),
      },
    };
  }
}

let crashCountdown: { type: string; left: number } | null = null;

/** The recovery tests' hook: dies like a killed process right after the n-th append of a type. */
function crashIfDue(spec: string, records: DecodedEvent[]): void {
  const [type, nth] = spec.split('#') as [string, string | undefined];
  crashCountdown ??= { type, left: Number(nth ?? 1) };
  crashCountdown.left -= records.filter((record) => record.type === type).length;
  if (crashCountdown.left <= 0) process.kill(process.pid, 'SIGKILL');
}

class PolicyNotReadyError extends DomainError {
  readonly code = 'policy_not_ready';
  override readonly retryable = true;
}
