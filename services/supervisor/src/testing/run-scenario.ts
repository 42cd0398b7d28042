import { mcpCatalogueOf } from '../engine/mcp-catalogue';
import { newEventId, validateWorkerDefinition, type DecodedEvent, type JsonObject } from '@packetagent/contracts';
import { ToolRegistry } from '@packetagent/tools';
import { decide } from '../run/run.decider';
import type { PinnedRun, RunIntent } from '../run/run.intent';
import { taskMessage } from '../run/run.prompt';
import { checkpointDigest, evolveRun, foldRun, initialRunState, stateDigest, type RunAggregate } from '../run/run.state';

/** The decider's Given/When/Then: events given (versions and checkpoint digests filled in), a decision at an instant. */

export const T0 = new Date('2026-11-30T09:00:00.000Z');
export const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);

const digest = 'a'.repeat(64);
const pin = { deploymentId: 'dep1', workerId: 'wrk1', workerName: 'release-audit', version: 1, digest, effectiveDigest: digest };
const activation = { activationId: 'act1', source: 'manual', dedupeKey: 'k', triggerId: null, receivedAt: T0.toISOString(), input: { release: '2026.11.3' }, inputRef: null, details: {} };
const model = { provider: 'scripted', model: 'script', scripted: true };

/** An event to give; `checkpoint` is filled in from the fold so far. */
export type Given = { type: string; data: unknown } | { type: 'checkpoint'; phase: 'plan' | 'act' };

export const admitted = (): Given => ({ type: 'run.admitted', data: { ...pin, runId: 'run1', activation } });
export const deferred = (): Given => ({ type: 'run.deferred', data: { ...pin, runId: 'run1', activation, reason: 'concurrency_limit' } });
export const claimed = (claim = 1): Given => ({ type: 'run.claimed', data: { replica: `replica-${claim}`, claim, fromCheckpoint: null } });
export const started = (bounds: Partial<{ maxWallSeconds: number; maxIterations: number; maxToolCalls: number; maxCostUsd: number | null }> = {}): Given => {
  const full = { maxWallSeconds: 600, maxIterations: 20, maxToolCalls: 40, maxCostUsd: 0.5, ...bounds };
  return { type: 'run.started', data: { model, bounds: full, deadline: at(full.maxWallSeconds).toISOString(), exit: 'finish', tools: ['http_fetch', 'slack_post'] } };
};
/** Admitted, claimed and started: a run in its loop with nothing pending. */
export const running = (bounds?: Parameters<typeof started>[0]): Given[] => [admitted(), claimed(), started(bounds)];

export interface Call {
  id: string;
  name: string;
  arguments: JsonObject | null;
  malformed?: string;
}
export const fetchCall = (id = 'c1', url = 'https://ci.example.com/releases/2026.11.3'): Call => ({ id, name: 'http_fetch', arguments: { url } });
export const postCall = (id = 'c2', text = 'Missing evidence: item 3'): Call => ({ id, name: 'slack_post', arguments: { channel: '#releases', text, credential: 'slack_release_channel' } });
export const finishCall = (args: JsonObject, id = 'cf'): Call => ({ id, name: 'finish', arguments: args });
export const commandCall = (id = 'c3', command = 'make deploy', computer = 'build-box'): Call => ({ id, name: 'run_command', arguments: { command, computer } });

export const modelTurn = (iteration: number, calls: Call[], text = '', costUsd = 0): Given => ({
  type: 'run.model_turn',
  data: { iteration, model, text, toolCalls: calls, stopReason: calls.length ? 'tool_use' : 'end_turn', usage: { inputTokens: 100, outputTokens: 20 }, costUsd, attempts: 1, durationMs: 5, native: null },
});
export const toolResult = (callId: string, tool: string, ok = true, executed = true): Given => ({ type: 'run.tool_result', data: { callId, tool, ok, output: ok ? 'done' : 'failed', summary: ok ? 'ok' : 'failed', executed } });
export const decided = (callId: string, tool: string, decision: 'allow' | 'deny' | 'approval_required', attentionId: string | null = null): Given => ({
  type: 'run.tool_decided',
  data: { callId, tool, verb: 'POST', resource: '#releases', callDigest: digest, decision, reason: { code: decision, text: decision }, attentionId },
});
export const waitingFor = (callId: string, attentionId: string, reason: 'approval' | 'question' | 'reconnect' = 'approval'): Given => ({ type: 'run.waiting', data: { reason, attentionId, callId } });
/** The run asked for `requestedUsd` more at its limit, and waits on the attention. */
export const budgetRequested = (attentionId: string, request = 1, requestedUsd = 0.5, limitUsd = 0.5): Given[] => [
  { type: 'run.budget_requested', data: { attentionId, request, requestedUsd, spentUsd: limitUsd, limitUsd, reason: `the run has spent $${limitUsd} of its $${limitUsd} limit` } },
  { type: 'run.waiting', data: { reason: 'budget', attentionId, callId: null } },
];
export const budgetRaised = (attentionId: string, limitUsd: number, raisedUsd = 0.5): Given => ({
  type: 'run.budget_raised',
  data: { attentionId, requestedUsd: raisedUsd, raisedUsd, limitUsd, approvedBy: { kind: 'user', id: 'owner-1' }, approverRole: 'member', cappedBy: null },
});
export const paused = (): Given => ({ type: 'run.waiting', data: { reason: 'paused', attentionId: null, callId: null } });
export const prepared = (callId: string, idempotentByKey: boolean, attempt = 1): Given => ({
  type: 'effect.prepared',
  data: { effectId: `run1:${callId}`, callId, tool: 'slack_post', verb: 'POST', resource: '#releases', idempotencyKey: `run1:${callId}`, requestDigest: digest, idempotentByKey, attempt },
});
/** A run_command call's receipt, as afterDecision writes it for a command on a computer. */
export const preparedCommand = (callId: string): Given => ({
  type: 'effect.prepared',
  data: { effectId: `run1:${callId}`, callId, tool: 'run_command', verb: 'exec', resource: 'make deploy', idempotencyKey: `run1:${callId}`, requestDigest: digest, idempotentByKey: false, attempt: 1 },
});
export const completed = (callId: string): Given => ({ type: 'effect.completed', data: { effectId: `run1:${callId}`, callId, summary: 'posted' } });
export const failedUnknown = (callId: string): Given => ({ type: 'effect.failed', data: { effectId: `run1:${callId}`, callId, error: { code: 'interrupted', message: 'cut' }, outcomeKnown: false } });
export const stopRequested = (reason: string | null = 'enough'): Given => ({ type: 'run.stop_requested', data: { reason } });
export const pauseRequested = (): Given => ({ type: 'run.pause_requested', data: { reason: null } });
export const resumeRequested = (): Given => ({ type: 'run.resume_requested', data: {} });
export const revokeRequested = (): Given => ({ type: 'run.revoke_requested', data: { reason: 'deployment revoked' } });
export const criteriaSet = (criteria: string[]): Given => ({ type: 'run.criteria_set', data: { criteria, reason: null, callId: 'definition' } });
export const compacted = (dropped = 2): Given => ({ type: 'run.compacted', data: { droppedMessages: dropped, estimatedTokens: 10 } });
export const checkpoint = (phase: 'plan' | 'act' = 'act'): Given => ({ type: 'checkpoint', phase });

/** The given events as the store would hand them back, in order with versions and valid checkpoints. */
export function history(...given: Array<Given | Given[]>): DecodedEvent[] {
  const events: DecodedEvent[] = [];
  let state = initialRunState('run1', 'ws1');
  for (const item of given.flat()) {
    const version = state.version + 1;
    let event: DecodedEvent;
    if ('phase' in item) {
      const stateHash = stateDigest(state);
      const previous = state.checkpoint?.digest ?? null;
      const data = {
        seq: (state.checkpoint?.seq ?? 0) + 1, phase: item.phase, iteration: state.iteration, toolCalls: state.toolCalls, costUsd: state.costUsd,
        remaining: { iterations: 0, toolCalls: 0, costUsd: null, wallSeconds: 0 }, stateDigest: stateHash, previousDigest: previous, digest: checkpointDigest(previous, stateHash),
      };
      event = { id: newEventId(), type: 'run.checkpoint', data, streamVersion: version } as DecodedEvent;
    } else {
      event = { id: newEventId(), type: item.type, data: item.data, streamVersion: version } as DecodedEvent;
    }
    state = evolveRun(state, event);
    events.push(event);
  }
  return events;
}

export function stateOf(...given: Array<Given | Given[]>): RunAggregate {
  return foldRun('run1', 'ws1', history(...given));
}

export interface DefinitionOptions {
  budgets?: Record<string, unknown>;
  criteria?: string[];
  outputSchema?: JsonObject;
  maxToolCalls?: number;
}

export function pinnedRun(options: DefinitionOptions & Partial<Pick<PinnedRun, 'stallTurns' | 'compactAtRatio'>> & { contextWindow?: number; structuredOutput?: boolean } = {}): PinnedRun {
  const definition = validateWorkerDefinition({
    apiVersion: 'packetagent/v1',
    kind: 'Worker',
    name: 'release-audit',
    model: { preset: 'default' },
    instructions: 'Audit the release.',
    tools: [
      { tool: 'http_fetch', verbs: ['GET'], resources: ['https://ci.example.com/*'], approval: 'never' },
      { tool: 'slack_post', resources: ['#releases'], approval: 'always', credentials: ['slack_release_channel'] },
      { tool: 'ask_owner' },
    ],
    budgets: { perRunUsd: 0.5, ...options.budgets },
    bounds: { maxWallSeconds: 600, maxIterations: 20, maxToolCalls: options.maxToolCalls ?? 40 },
    exit: options.outputSchema ? { outputSchema: options.outputSchema } : { finish: { criteria: options.criteria ?? ['every release item has evidence'] } },
  });
  const tools = new ToolRegistry({ config: {} });
  return {
    definition,
    model: { ...model, contextWindow: options.contextWindow ?? 200_000, maxOutputTokens: 4_096, structuredOutput: options.structuredOutput ?? false },
    plan: (callId, name, args) => tools.plan(callId, name, args, mcpCatalogueOf(definition)),
    mcp: mcpCatalogueOf(definition),
    task: taskMessage(activation.input),
    stallTurns: options.stallTurns ?? 3,
    compactAtRatio: options.compactAtRatio ?? 0.8,
  };
}

/** `given(...).when(now, pinned).then(...)`: the decider's specs read as the loop does. */
export function given(...events: Array<Given | Given[]>) {
  const state = stateOf(...events);
  return {
    state,
    when(now: Date = at(1), pinned: PinnedRun = pinnedRun()) {
      const intent = decide(state, pinned, now);
      return {
        intent,
        then(expected: { kind: RunIntent['kind'] } & Record<string, unknown>): RunIntent {
          expect(intent).toMatchObject(expected);
          return intent;
        },
        /** The run ends with this terminal event (after any events listed before it). */
        thenEnds(type: string, data?: Record<string, unknown>): RunIntent {
          expect(intent.kind).toBe('end');
          const events = (intent as Extract<RunIntent, { kind: 'end' }>).events;
          expect(events[events.length - 1]).toMatchObject({ type, ...(data ? { data } : {}) });
          return intent;
        },
      };
    },
  };
}
