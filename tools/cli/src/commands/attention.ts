import { z } from 'zod';
import type { CommandContext } from '../context';
import { UsageError } from '../errors';
import { runInputOf } from './run';

const AttentionSchema = z.looseObject({
  id: z.string().min(1),
  state: z.string(),
  runId: z.string(),
  tool: z.string(),
  verb: z.string(),
  resource: z.string().nullish(),
  scope: z.string().nullish(),
  deadline: z.string().nullish(),
  arguments: z.unknown().optional(),
});
type AttentionRecord = z.infer<typeof AttentionSchema>;

const BudgetRequestSchema = z.object({
  kind: z.literal('budget_request'),
  evidence: z.looseObject({ requestedUsd: z.number(), spentUsd: z.number(), limitUsd: z.number(), reason: z.string() }),
});

/** A budget request says how much more it asks for and why; other attentions name their call. */
function askedFor(item: AttentionRecord): string {
  const budget = BudgetRequestSchema.safeParse(item.arguments);
  if (budget.success) {
    const { requestedUsd, spentUsd, limitUsd, reason } = budget.data.evidence;
    return `budget request: $${requestedUsd} more (spent $${spentUsd} of $${limitUsd}: ${reason})`;
  }
  return [item.tool, item.verb, item.resource].filter((part) => part).join(' ');
}

const AttentionListSchema = z.looseObject({ items: z.array(AttentionSchema) });

function attentionLine(item: AttentionRecord): string {
  const call = askedFor(item);
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

/**
 * `packetagent approve ID`: covers the one call asked about, or with `forRun` identical calls in
 * that run. `edit` (inline JSON, or `@path` to a JSON or YAML file) approves the call with these
 * arguments instead; policy checks them against the tool and the run's grants.
 */
export async function approveAttention(context: CommandContext, attentionId: string, options: { forRun?: boolean; edit?: string }): Promise<void> {
  const { client } = context;
  const scope = options.forRun ? 'run' : 'once';
  const edited = options.edit === undefined ? undefined : await runInputOf(context.documents, options.edit);
  if (edited !== undefined && (typeof edited !== 'object' || edited === null || Array.isArray(edited))) throw new UsageError('--edit must be a JSON object: the call\'s arguments');
  const item = await client.post(client.workspacePath('attention', attentionId, 'approve'), { json: { scope, ...(edited !== undefined ? { arguments: edited } : {}) } }, AttentionSchema);
  context.report([attentionLine(item)], item);
}

/** `packetagent reject ID --reason TEXT`: the reason is recorded and shown to the run. */
export async function rejectAttention(context: CommandContext, attentionId: string, options: { reason: string }): Promise<void> {
  const { client } = context;
  const item = await client.post(client.workspacePath('attention', attentionId, 'reject'), { json: { reason: options.reason } }, AttentionSchema);
  context.report([attentionLine(item)], item);
}
