import { z } from 'zod';
import type { CommandContext } from '../context';
import { loadDocument, parseDocument } from '../documents';

const StartedSchema = z.looseObject({ runId: z.string().min(1) });
const RunSchema = z.looseObject({ id: z.string().min(1), state: z.string() });

export interface StartRunOptions {
  /** Inline JSON, or `@path` to a JSON or YAML file (`@-` for standard input). */
  input?: string;
  idempotencyKey?: string;
}

async function inputOf(context: CommandContext, input: string): Promise<unknown> {
  if (input.startsWith('@')) return (await loadDocument(input.slice(1), context.documents)).value;
  return parseDocument(input, 'json', '--input');
}

/** `packetagent run start DEPLOYMENT`: a manual activation; the same idempotency key gives the same run. */
export async function startRun(context: CommandContext, deploymentId: string, options: StartRunOptions): Promise<void> {
  const { client } = context;
  const body = {
    ...(options.input !== undefined ? { input: await inputOf(context, options.input) } : {}),
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
  const lines = [`run ${run.id}`, `state: ${run.state}`];
  for (const [key, value] of Object.entries(run)) if (key !== 'id' && key !== 'state') lines.push(`${key}: ${show(value)}`);
  context.report(lines, run);
}
