import { z } from 'zod';
import type { CommandContext } from '../context';
import { loadDocument, parseDocument, type DocumentSource } from '../documents';
import { payloadNotes } from './payload';
import { outcomeOf, outcomeText, runEvents, runOutcome } from './run-outcome';

const StartedSchema = z.looseObject({ runId: z.string().min(1) });
const RunSchema = z.looseObject({ id: z.string().min(1), state: z.string() });

export interface StartRunOptions {
  /** Inline JSON, or `@path` to a JSON or YAML file (`@-` for standard input). */
  input?: string;
  idempotencyKey?: string;
}

/** A run's --input: inline JSON, or `@path` to a JSON or YAML file (`@-` for standard input). */
export async function runInputOf(documents: DocumentSource, input: string): Promise<unknown> {
  if (input.startsWith('@')) return (await loadDocument(input.slice(1), documents)).value;
  return parseDocument(input, 'json', '--input');
}

/** `packetagent run start DEPLOYMENT`: a manual activation; the same idempotency key gives the same run. */
export async function startRun(context: CommandContext, deploymentId: string, options: StartRunOptions): Promise<void> {
  const { client } = context;
  const body = {
    ...(options.input !== undefined ? { input: await runInputOf(context.documents, options.input) } : {}),
    ...(options.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {}),
  };
  const started = await client.post(client.workspacePath('deployments', deploymentId, 'runs'), { json: body }, StartedSchema);
  context.report([started.runId], started);
}

function show(value: unknown): string {
  if (value === null || value === undefined) return '-';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** `packetagent run get RUN`: the run's state first, then its other fields. */
export async function getRun(context: CommandContext, runId: string): Promise<void> {
  const { client } = context;
  const run = await client.get(client.workspacePath('runs', runId), RunSchema);
  const outcome = await runOutcome(client, run.id, run.state);
  const lines = [`run ${run.id}`, `state: ${run.state}`];
  if (outcome) lines.push(`${run.state === 'succeeded' ? 'summary' : 'reason'}: ${outcomeText(outcome)}`);
  for (const [key, value] of Object.entries(run)) if (key !== 'id' && key !== 'state') lines.push(`${key}: ${show(value)}`);
  context.report(lines, outcome ? { ...run, outcome } : run);
}

const RunControlSchema = RunSchema.extend({ stopRequested: z.boolean().optional(), pauseRequested: z.boolean().optional() });
type RunControlRecord = z.infer<typeof RunControlSchema>;

/** One line per run: what a person scans a list or a control answer for. */
function runLine(run: RunControlRecord): string {
  const requested = [run.stopRequested ? 'stop requested' : '', run.pauseRequested ? 'pause requested' : ''].filter(Boolean);
  const fields = [run.id, run.state, show(run['deploymentId']), show(run['createdAt'])];
  return `${fields.join('  ')}${requested.length ? `  (${requested.join(', ')})` : ''}`;
}

export type RunControl = 'stop' | 'pause' | 'resume';

/**
 * `packetagent run stop|pause|resume RUN`: a run not yet started is cancelled at once; for a
 * running one the request is recorded and honoured by the supervisor between steps.
 */
export async function controlRun(context: CommandContext, action: RunControl, runId: string, options: { reason?: string }): Promise<void> {
  const { client } = context;
  const body = action !== 'resume' && options.reason !== undefined ? { reason: options.reason } : {};
  const run = await client.post(client.workspacePath('runs', runId, action), { json: body }, RunControlSchema);
  context.report([runLine(run)], run);
}

const RunPageSchema = z.looseObject({ items: z.array(RunControlSchema), nextCursor: z.string().nullish() });

/** The API's largest page. */
const MAX_PAGE_SIZE = 200;

export interface ListRunsOptions {
  deployment?: string;
  state?: string;
  limit: number;
}

/** `packetagent run list`: newest first as the API orders them, following cursors until `limit` runs. */
export async function listRuns(context: CommandContext, options: ListRunsOptions): Promise<void> {
  const { client } = context;
  const runs: RunControlRecord[] = [];
  let cursor: string | undefined;
  while (runs.length < options.limit) {
    const page = await client.get(client.workspacePath('runs'), RunPageSchema, {
      deploymentId: options.deployment,
      state: options.state,
      cursor,
      limit: String(Math.min(MAX_PAGE_SIZE, options.limit - runs.length)),
    });
    runs.push(...page.items.slice(0, options.limit - runs.length));
    const next = page.nextCursor ?? undefined;
    // A repeated cursor would loop forever; an empty page ends the list too.
    if (!next || next === cursor || page.items.length === 0) break;
    cursor = next;
  }
  context.report(runs.length ? runs.map(runLine) : ['no runs'], { items: runs });
}

/** The one-line gist of a run event: what a person reads a run's log for. */
function eventGist(type: string, data: Record<string, unknown>): string {
  const text = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
  switch (type) {
    case 'run.model_turn': {
      const calls = (data['toolCalls'] as Array<{ name: string }> | undefined)?.map((call) => call.name) ?? [];
      const model = data['model'] as { provider?: string; model?: string; scripted?: boolean } | undefined;
      return `${model?.provider}/${model?.model}${model?.scripted ? ' (scripted)' : ''}  $${Number(data['costUsd'] ?? 0).toFixed(6)}${calls.length ? `  calls: ${calls.join(', ')}` : ''}`;
    }
    case 'run.tool_decided':
      return `${text(data['tool'])} ${text(data['verb'])} ${data['resource'] ? text(data['resource']) : ''} -> ${text(data['decision'])} (${text((data['reason'] as { code?: string } | undefined)?.code)})`;
    case 'run.tool_result':
      return `${text(data['tool'])} ${data['ok'] ? 'ok' : 'failed'}: ${text(data['summary'])}`;
    case 'effect.prepared':
      return `${text(data['tool'])} ${text(data['verb'])} key ${text(data['idempotencyKey'])} attempt ${text(data['attempt'])}`;
    case 'effect.failed':
      return `${text((data['error'] as { code?: string } | undefined)?.code)}${data['outcomeKnown'] === false ? ' (outcome not known)' : ''}`;
    case 'run.checkpoint':
      return `#${text(data['seq'])} ${text(data['phase'])}  iteration ${text(data['iteration'])}, tool calls ${text(data['toolCalls'])}, $${Number(data['costUsd'] ?? 0).toFixed(6)}`;
    case 'run.waiting':
      return `${text(data['reason'])}${data['attentionId'] ? ` on attention ${text(data['attentionId'])}` : ''}`;
    default:
      return '';
  }
}

/**
 * `packetagent run logs RUN`: the run's events in order, one line each, every page of them. A
 * field stored by reference shows as its size and digest (the page is asked for references as
 * stored, so a 5 MB tool result is never fetched to print one line). The event that ended the run
 * says why, and for a rejection who rejected it and their reason.
 */
export async function runLogs(context: CommandContext, runId: string): Promise<void> {
  const { client } = context;
  const lines: string[] = [];
  const items: unknown[] = [];
  for await (const event of runEvents(client, runId)) {
    const outcome = await outcomeOf(client, event);
    items.push(outcome ? { ...event, outcome } : event);
    const data = (event.data ?? {}) as Record<string, unknown>;
    const gist = [outcome ? outcomeText(outcome) : eventGist(event.type, data), ...payloadNotes(event.data).map((note) => `[${note}]`)].filter(Boolean).join('  ');
    lines.push(`${event.occurredAt}  ${String(event.streamVersion).padStart(4)}  ${event.type}${gist ? `  ${gist}` : ''}`);
  }
  context.report(lines, { items });
}
