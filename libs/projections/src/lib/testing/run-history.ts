import type { DecodedEvent } from '@packetagent/contracts';

const DIGEST = 'a'.repeat(64);

/** A decoded event for pure specs: only what projections read is meaningful. */
export function decoded(type: string, data: unknown, at: { stream: string; position: number; version?: number; occurredAt?: string; workspaceId?: string }): DecodedEvent {
  return {
    id: `00000000-0000-4000-8000-${String(at.position).padStart(12, '0')}`,
    type,
    schemaVersion: 1,
    storedSchemaVersion: 1,
    stream: at.stream,
    streamVersion: at.version ?? at.position,
    globalPosition: at.position,
    workspaceId: at.workspaceId ?? 'ws1',
    occurredAt: at.occurredAt ?? new Date(Date.UTC(2026, 10, 30, 8, 0, at.position)).toISOString(),
    causationId: null,
    correlationId: null,
    traceparent: null,
    actor: { kind: 'service', id: 'test' },
    data,
    digest: DIGEST,
    prevDigest: null,
  };
}

export const pin = { deploymentId: 'dep1', workerId: 'wrk1', workerName: 'reporter', version: 2, digest: DIGEST, effectiveDigest: DIGEST };

export const activation = {
  activationId: 'act1',
  source: 'manual' as const,
  dedupeKey: 'k1',
  triggerId: null,
  receivedAt: '2026-11-30T08:00:00.000Z',
  input: {},
  inputRef: null,
  details: {},
};

export const model = { provider: 'scripted', model: 'reporter', scripted: true };
export const bounds = { maxWallSeconds: 600, maxIterations: 10, maxToolCalls: 5, maxCostUsd: 2 };

/** The data of a short run's events, in stream order: admitted, started, one turn with a call, a checkpoint, approval wait, resume, success. */
export function runHistory(runId: string): Array<{ type: string; data: unknown }> {
  return [
    { type: 'run.admitted', data: { ...pin, runId, activation } },
    { type: 'run.claimed', data: { replica: 'r1', claim: 1, fromCheckpoint: null } },
    { type: 'run.started', data: { model, bounds, deadline: '2026-11-30T08:10:00.000Z', exit: 'finish', tools: ['http_fetch', 'finish'] } },
    {
      type: 'run.model_turn',
      data: {
        iteration: 1,
        model,
        text: '',
        toolCalls: [{ id: 'c1', name: 'http_fetch', arguments: { url: 'https://example.com' } }],
        stopReason: 'tool_use',
        usage: { inputTokens: 100, outputTokens: 10 },
        costUsd: 0.25,
        attempts: 1,
        durationMs: 5,
        native: null,
      },
    },
    {
      type: 'run.tool_decided',
      data: { callId: 'c1', tool: 'http_fetch', verb: 'POST', resource: 'https://example.com', callDigest: DIGEST, decision: 'approval_required', reason: { code: 'approval_required', text: 'asks' }, attentionId: 'att1' },
    },
    { type: 'run.waiting', data: { reason: 'approval', attentionId: 'att1', callId: 'c1' } },
    { type: 'run.resumed', data: { reason: 'approved' } },
    { type: 'run.tool_result', data: { callId: 'c1', tool: 'http_fetch', ok: true, output: 'secret output', summary: '200 OK', executed: true } },
    {
      type: 'run.checkpoint',
      data: {
        seq: 1,
        phase: 'act',
        iteration: 1,
        toolCalls: 1,
        costUsd: 0.25,
        remaining: { iterations: 9, toolCalls: 4, costUsd: 1.75, wallSeconds: 590 },
        stateDigest: DIGEST,
        previousDigest: null,
        digest: 'b'.repeat(64),
      },
    },
    { type: 'run.succeeded', data: { summary: 'all done', output: { ok: true } } },
  ];
}
