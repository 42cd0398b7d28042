import { z } from 'zod';
import type { EventRegistry } from '../registry';
import { ActorSchema } from '../control-plane/intake.commands.v1';
import { RoleSchema } from '../identity/roles';
import { ApprovalSpecSchema, type ApprovalRules } from '../worker-definition/approval-rules';

const id = z.string().min(1).max(200);
const sha256 = z.string().regex(/^[0-9a-f]{64}$/);

export const DECISIONS = ['allow', 'deny', 'approval_required'] as const;
export const DecisionSchema = z.enum(DECISIONS);
export type Decision = z.infer<typeof DecisionSchema>;

/**
 * Why `authorize` answered as it did. Every deny names the first rule the call failed, in the
 * order they are checked: run, deployment, grants, tool, verb, resource, credentials, computer
 * (named by the grant, its record readable, its policy), approval.
 */
export const DECISION_REASON_CODES = [
  // allow
  'granted',
  'approved_once',
  'approved_for_run',
  // approval_required
  'approval_required',
  'first_use',
  'approval_pending',
  // deny
  'unknown_run',
  'unknown_deployment',
  'deployment_paused',
  'deployment_revoked',
  'grants_unavailable',
  'unknown_tool',
  'tool_not_granted',
  'verb_not_granted',
  'resource_required',
  'resource_not_expected',
  'resource_invalid',
  'resource_not_granted',
  'credential_not_granted',
  'computer_not_granted',
  'computer_unavailable',
  'computer_policy_denied',
  'computer_secrets_denied',
  'approval_rejected',
  'approval_expired',
  'approval_withdrawn',
  /** The approval is for an edited call: the original is not run; `edit` names the one to run instead. */
  'approval_edited',
] as const;
export const DecisionReasonCodeSchema = z.enum(DECISION_REASON_CODES);
export type DecisionReasonCode = z.infer<typeof DecisionReasonCodeSchema>;

export const DecisionReasonSchema = z.object({ code: DecisionReasonCodeSchema, text: z.string().max(1000) });
export type DecisionReason = z.infer<typeof DecisionReasonSchema>;

/** One authorisation decision, recorded on `policy-<runId>`; the resource is redacted. */
export const PolicyDecidedV1 = z.object({
  runId: id,
  tool: z.string(),
  verb: z.string(),
  resource: z.string().nullable(),
  callDigest: sha256,
  decision: DecisionSchema,
  reason: DecisionReasonSchema,
  approvalId: z.string().optional(),
  deploymentId: id.optional(),
  /** The effective digest the compiled grants were bound to, when the run is known. */
  effectiveDigest: sha256.optional(),
  /** The registered computer the call was to run on, when it named one. */
  computer: z.string().optional(),
});

export const AttentionScopeSchema = z.enum(['once', 'run']);
export type AttentionScope = z.infer<typeof AttentionScopeSchema>;

export const AttentionRequestedV1 = z.object({
  attentionId: id,
  runId: id,
  deploymentId: id,
  versionDigest: sha256,
  tool: z.string(),
  verb: z.string(),
  resource: z.string().nullable(),
  arguments: z.json(),
  requester: ActorSchema,
  deadline: z.iso.datetime(),
  /** The grant's approval rules when it has any (as written), and when the reminder and escalation are due. */
  rules: (ApprovalSpecSchema as unknown as z.ZodType<ApprovalRules>).optional(),
  remindAt: z.iso.datetime().optional(),
  escalateAt: z.iso.datetime().optional(),
});

/** An approval changed the call it approves; the arguments are redacted. */
export const AttentionEditSchema = z.object({
  originalDigest: sha256,
  editedDigest: sha256,
  arguments: z.json(),
  editor: ActorSchema,
});
export type AttentionEdit = z.infer<typeof AttentionEditSchema>;

export const AttentionApprovedV1 = z.object({
  scope: AttentionScopeSchema,
  actor: ActorSchema,
  /** Under a quorum: every distinct approver, in the order they approved (the last is `actor`). */
  approvers: z.array(ActorSchema).optional(),
  edit: AttentionEditSchema.optional(),
  /** The final approver's workspace role as the caller stated it (what a budget request's raise is checked against). */
  role: RoleSchema.optional(),
});
/** One approval of several a quorum needs; the attention stays open. */
export const AttentionApprovalRecordedV1 = z.object({ actor: ActorSchema, scope: AttentionScopeSchema, at: z.iso.datetime() });
/** The reminder of an open attention fell due (once). */
export const AttentionRemindedV1 = z.object({ at: z.iso.datetime() });
/** The escalation of an open attention fell due (once); `to` names the definition's notification route. */
export const AttentionEscalatedV1 = z.object({ to: z.string().min(1).max(41), at: z.iso.datetime() });
export const AttentionRejectedV1 = z.object({ reason: z.string().max(1000), actor: ActorSchema });
export const AttentionExpiredV1 = z.object({ deadline: z.iso.datetime() });
/** Closed without an answer because what it asked about can no longer happen (its deployment was revoked). */
export const AttentionWithdrawnV1 = z.object({ reason: z.string().max(1000) });

/**
 * Policy signed a single-use grant for a registered computer's key outside any run (a sandbox
 * probe); recorded on `policykeys-<workspaceId>`. The token itself is never recorded.
 */
export const ComputerKeyGrantedV1 = z.object({
  computer: z.string().min(1).max(63),
  credential: z.string().min(1).max(63),
  /** `mcp_list`: listing the tools of an MCP server that runs on the computer, when a version is created. */
  purpose: z.enum(['probe', 'reclaim', 'mcp_list']),
  grantId: id,
});

/** Policy signed a single-use grant for a notification route's credential; recorded on `policynotify-<runId>`. */
export const RouteCredentialGrantedV1 = z.object({
  runId: id,
  routeIndex: z.number().int().min(0).max(15),
  channel: z.string().max(40),
  credential: z.string().min(1).max(63),
  deliveryId: id,
  grantId: id,
});

export const PolicyEvents = {
  'policy.decided': PolicyDecidedV1,
  'attention.requested': AttentionRequestedV1,
  'attention.approved': AttentionApprovedV1,
  'attention.rejected': AttentionRejectedV1,
  'attention.expired': AttentionExpiredV1,
  'attention.withdrawn': AttentionWithdrawnV1,
  'attention.approval_recorded': AttentionApprovalRecordedV1,
  'attention.reminded': AttentionRemindedV1,
  'attention.escalated': AttentionEscalatedV1,
  'policy.computer_key_granted': ComputerKeyGrantedV1,
  'policy.route_credential_granted': RouteCredentialGrantedV1,
} as const;

export type PolicyEventType = keyof typeof PolicyEvents;
export type PolicyEventData<T extends PolicyEventType> = z.infer<(typeof PolicyEvents)[T]>;

export const POLICY_STREAM_CATEGORY = 'policy';
export const ATTENTION_STREAM_CATEGORY = 'attention';
/** Purpose of the scheduler timer that closes an attention at its deadline. */
export const ATTENTION_DEADLINE_PURPOSE = 'attention_deadline';
/** Purposes of the timers that remind of and escalate an open attention under its grant's rules. */
export const ATTENTION_REMINDER_PURPOSE = 'attention_reminder';
export const ATTENTION_ESCALATION_PURPOSE = 'attention_escalation';

export const policyStream = (runId: string): string => `${POLICY_STREAM_CATEGORY}-${runId}`;
export const attentionStream = (attentionId: string): string => `${ATTENTION_STREAM_CATEGORY}-${attentionId}`;
export const POLICY_KEYS_STREAM_CATEGORY = 'policykeys';
/** The run the grants of computer probes name: they belong to no run. */
export const COMPUTER_PROBE_RUN_ID = 'computer-probe';
/** The tool a computer key grant names, in runs and probes alike. */
export const computerGrantTool = (computer: string): string => `computer:${computer}`;
/** Where a workspace's computer key grants outside runs are recorded. */
export const policyKeysStream = (workspaceId: string): string => `${POLICY_KEYS_STREAM_CATEGORY}-${workspaceId}`;

export const POLICY_NOTIFY_STREAM_CATEGORY = 'policynotify';
export const policyNotifyStream = (runId: string): string => `${POLICY_NOTIFY_STREAM_CATEGORY}-${runId}`;
/** The tool a notification route's credential grant names. */
export const notificationGrantTool = (channel: string): string => `notify:${channel}`;

export function registerPolicyEvents(registry: EventRegistry): EventRegistry {
  return registry.registerFirstVersions(PolicyEvents);
}
