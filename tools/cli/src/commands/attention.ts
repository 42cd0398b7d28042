import { z } from 'zod';
import type { CommandContext } from '../context';

const AttentionSchema = z.looseObject({
  id: z.string().min(1),
  state: z.string(),
  runId: z.string(),
  tool: z.string(),
  verb: z.string(),
  resource: z.string().nullish(),
  scope: z.string().nullish(),
  deadline: z.string().nullish(),
});
type AttentionRecord = z.infer<typeof AttentionSchema>;

const AttentionListSchema = z.looseObject({ items: z.array(AttentionSchema) });

function attentionLine(item: AttentionRecord): string {
  const call = [item.tool, item.verb, item.resource].filter((part) => part).join(' ');
  const scope = item.state === 'approved' && item.scope ? ` (${item.scope})` : '';
  return [item.id, `${item.state}${scope}`, `run ${item.runId}`, call, item.state === 'open' && item.deadline ? `until ${item.deadline}` : '']
    .filter(Boolean)
    .join('  ');
}

/** `packetagent attention list`: approvals asked for by runs, one line each. */
export async function listAttention(context: CommandContext, options: { state?: string; limit?: number }): Promise<void> {
  const { client } = context;
  const answer = await client.get(client.workspacePath('attention'), AttentionListSchema, {
    state: options.state,
    limit: options.limit === undefined ? undefined : String(options.limit),
  });
  context.report(answer.items.length ? answer.items.map(attentionLine) : ['nothing needs attention'], answer);
}

/** `packetagent approve ID`: covers the one call asked about, or with `forRun` identical calls in that run. */
export async function approveAttention(context: CommandContext, attentionId: string, options: { forRun?: boolean }): Promise<void> {
  const { client } = context;
  const scope = options.forRun ? 'run' : 'once';
  const item = await client.post(client.workspacePath('attention', attentionId, 'approve'), { json: { scope } }, AttentionSchema);
  context.report([attentionLine(item)], item);
}

/** `packetagent reject ID --reason TEXT`: the reason is recorded and shown to the run. */
export async function rejectAttention(context: CommandContext, attentionId: string, options: { reason: string }): Promise<void> {
  const { client } = context;
  const item = await client.post(client.workspacePath('attention', attentionId, 'reject'), { json: { reason: options.reason } }, AttentionSchema);
  context.report([attentionLine(item)], item);
}
