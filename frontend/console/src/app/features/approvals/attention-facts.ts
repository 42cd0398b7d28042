/**
 * An attention as the gateway answers it (AttentionSchema of libs/contracts
 * policy.commands.v1.ts; ApprovalRules of worker-definition/approval-rules.ts), and what the
 * Approvals page says about it.
 */

export interface Actor {
  kind: string;
  id: string;
}

export interface ApprovalRules {
  mode: string;
  deadline?: string;
  remindAfter?: string;
  escalate?: { after: string; to: string };
  /** Distinct approvers needed; 1 when absent. */
  quorum?: number;
  /** A workspace role approvers hold at least, or the user ids and emails that may approve. */
  approvers?: string | string[];
}

export interface Attention {
  id: string;
  runId: string;
  deploymentId: string;
  tool: string;
  verb: string;
  resource: string | null;
  /** Redacted: a redacted value reads `***`. */
  arguments: unknown;
  requester: Actor;
  state: string;
  deadline: string;
  createdAt: string;
  rules?: ApprovalRules | null;
  /** Approvals recorded so far towards the quorum. */
  approvals?: Array<{ actor: Actor; scope: string; at: string }>;
  remindAt?: string | null;
  remindedAt?: string | null;
  escalateAt?: string | null;
  escalatedAt?: string | null;
}

export interface BudgetRequest {
  requestedUsd: number;
  spentUsd: number;
  limitUsd: number;
  reason: string;
}

/** REDACTED of libs/contracts policy/redaction.ts: what stands in for a value that was not stored. */
export const REDACTED = '***';
/** MAX_EDITED_ARGUMENTS_BYTES of libs/contracts policy.commands.v1.ts. */
export const MAX_EDITED_ARGUMENTS_BYTES = 64 * 1024;
/** MCP_TOOL of libs/contracts known-tools.ts: its schema is in the run's catalogue, which policy does not load to check an edit. */
const MCP_TOOL = 'mcp';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A budget request's amount and reason, from the attention's recorded arguments; null for anything else. */
export function budgetRequestOf(args: unknown): BudgetRequest | null {
  if (!isObject(args) || args['kind'] !== 'budget_request' || !isObject(args['evidence'])) return null;
  const { requestedUsd, spentUsd, limitUsd, reason } = args['evidence'];
  if (typeof requestedUsd !== 'number' || typeof spentUsd !== 'number' || typeof limitUsd !== 'number') return null;
  return { requestedUsd, spentUsd, limitUsd, reason: typeof reason === 'string' ? reason : '' };
}

/** `1 of 2 approvals`, when the rules need more than one; null otherwise. */
export function quorumText(rules: ApprovalRules | null | undefined, approvals: readonly unknown[] | undefined): string | null {
  const quorum = rules?.quorum ?? 1;
  if (quorum <= 1) return null;
  return `${approvals?.length ?? 0} of ${quorum} approvals`;
}

/** Who may approve under the rules, in words; null when anyone with the approve permission may. */
export function approversText(rules: ApprovalRules | null | undefined): string | null {
  const approvers = rules?.approvers;
  if (approvers === undefined) return null;
  return typeof approvers === 'string' ? `at least the ${approvers} role` : approvers.join(', ');
}

/**
 * Whether the page offers to edit the call before approving it. The server refuses an edit of
 * what a run raised itself (a budget request), of an MCP tool's call, and under a quorum of more
 * than one; it checks the rest (control tools, calls on a computer) and says why.
 */
export function argumentsEditable(attention: Pick<Attention, 'tool' | 'arguments' | 'rules'>): boolean {
  const raisedByRun = isObject(attention.arguments) && 'kind' in attention.arguments && 'evidence' in attention.arguments;
  return !raisedByRun && attention.tool !== MCP_TOOL && (attention.rules?.quorum ?? 1) <= 1 && isObject(attention.arguments);
}

function holdsRedacted(value: unknown): boolean {
  if (typeof value === 'string') return value.includes(REDACTED);
  if (Array.isArray(value)) return value.some(holdsRedacted);
  if (isObject(value)) return Object.entries(value).some(([key, item]) => key.includes(REDACTED) || holdsRedacted(item));
  return false;
}

/** The same JSON whatever the order of its keys, to tell an edit from the original. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export type EditedArguments = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/**
 * The arguments the approver typed, checked before they are sent: a JSON object of at most
 * 64 KiB, changed from the recorded call (an unchanged one is a plain approval), and without a
 * redacted `***` left in it, which the edited call would otherwise be made with.
 */
export function parseEditedArguments(text: string, original?: unknown): EditedArguments {
  if (!text.trim()) return { ok: false, message: 'Type the arguments as a JSON object.' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `Not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (!isObject(value)) return { ok: false, message: 'The arguments must be a JSON object, as the call was made with.' };
  const bytes = new TextEncoder().encode(JSON.stringify(value)).length;
  if (bytes > MAX_EDITED_ARGUMENTS_BYTES) return { ok: false, message: `The arguments are ${bytes} bytes as JSON; at most ${MAX_EDITED_ARGUMENTS_BYTES} can be sent.` };
  if (holdsRedacted(value)) return { ok: false, message: `The arguments still hold a redacted value (${REDACTED}): type the real value, or remove it.` };
  if (original !== undefined && canonical(value) === canonical(original)) return { ok: false, message: 'The arguments are unchanged: approve the call as it is instead.' };
  return { ok: true, value };
}
