import { z } from 'zod';
import { defineCommand } from '../commands';
import { Identifiers } from '../envelope';
import { ActorSchema } from '../control-plane/intake.commands.v1';
import { ApprovalSpecSchema, type ApprovalRules } from '../worker-definition/approval-rules';
import { RoleSchema } from '../identity/roles';
import { AttentionEditSchema, AttentionScopeSchema, DecisionReasonSchema, DecisionSchema } from './policy.events.v1';

const workspaceId = z.string().regex(Identifiers.workspace);
const id = z.string().min(1).max(200);
const sha256 = z.string().regex(/^[0-9a-f]{64}$/);

export const ATTENTION_STATES = ['open', 'approved', 'rejected', 'expired', 'withdrawn'] as const;
export const AttentionStateSchema = z.enum(ATTENTION_STATES);
export type AttentionState = z.infer<typeof AttentionStateSchema>;

export const AuthorizeRequestSchema = z.object({
  workspaceId,
  /** Also names the decision stream `policy-<runId>`, so it follows the stream id grammar. */
  runId: z.string().regex(/^[A-Za-z0-9_:@-]{1,200}$/),
  /** Any name: an unknown tool is a deny, not a malformed request. */
  tool: z.string().min(1).max(100),
  /** Empty for control tools, which take no verbs. */
  verb: z.string().max(50),
  resource: z.string().max(4096).nullable(),
  /** Credential names the call needs; each must be granted to the tool. */
  credentials: z.array(z.string().min(1).max(63)).max(32).default([]),
  /** SHA-256 of the redacted call, computed by the caller: names the call an approve-once covers. */
  callDigest: sha256,
  /** The redacted call, for the person asked to approve it. */
  arguments: z.json().default(null),
  /** Who asks (recorded as the attention's requester); the supervisor by default. */
  requester: ActorSchema.default({ kind: 'service', id: 'supervisor' }),
  /**
   * The effective digest the run is pinned to as its owner knows it (it moves when a waiting run
   * is migrated); policy decides under it, or denies if it cannot confirm it from the run's stream.
   */
  effectiveDigest: sha256.optional(),
  /**
   * The registered computer the call runs on (run_command with `computer`): its grant must name
   * it, its policy is composed with the grant's (the stricter wins), and on allow the answer
   * carries a single-use grant for the computer's key.
   */
  computer: z.string().regex(/^[a-z][a-z0-9-]{0,62}$/).optional(),
});
export type AuthorizeRequest = z.output<typeof AuthorizeRequestSchema>;

export const CredentialGrantTokenSchema = z.object({ credential: z.string(), token: z.string() });

export const AuthorizeResultSchema = z.object({
  decision: DecisionSchema,
  reason: DecisionReasonSchema,
  approvalId: z.string().optional(),
  /** One signed, single-use, short-lived grant per requested credential, on allow only. */
  credentialGrants: z.array(CredentialGrantTokenSchema).optional(),
  /** On allow of a call on a computer: the grant the sandbox redeems for the computer's key. */
  computerGrant: z.string().optional(),
  /**
   * With `approval_edited`: the person approved an edited call instead. The run records the edit
   * and asks again for the edited call (its digest), which the same approval allows.
   */
  edit: z
    .object({ attentionId: id, originalDigest: sha256, editedDigest: sha256, arguments: z.record(z.string(), z.json()), editor: ActorSchema })
    .optional(),
});
export type AuthorizeResult = z.infer<typeof AuthorizeResultSchema>;

export const AttentionSchema = z.object({
  id,
  workspaceId,
  runId: id,
  deploymentId: id,
  versionDigest: sha256,
  tool: z.string(),
  verb: z.string(),
  /** Redacted. */
  resource: z.string().nullable(),
  /** Redacted. */
  arguments: z.json(),
  requester: ActorSchema,
  state: AttentionStateSchema,
  scope: AttentionScopeSchema.nullable(),
  answeredBy: ActorSchema.nullable(),
  reason: z.string().nullable(),
  deadline: z.iso.datetime(),
  createdAt: z.iso.datetime(),
  answeredAt: z.iso.datetime().nullable(),
  /** An approve-once approval that a call has used. */
  consumed: z.boolean(),
  /** Version of the attention's stream: the number of events it holds. */
  version: z.number().int().positive(),
  /** The grant's approval rules, when it has any. */
  rules: (ApprovalSpecSchema as unknown as z.ZodType<ApprovalRules>).nullable().optional(),
  /** Approvals recorded so far towards the quorum. */
  approvals: z.array(z.object({ actor: ActorSchema, scope: AttentionScopeSchema, at: z.iso.datetime() })).optional(),
  remindAt: z.iso.datetime().nullable().optional(),
  remindedAt: z.iso.datetime().nullable().optional(),
  escalateAt: z.iso.datetime().nullable().optional(),
  escalatedAt: z.iso.datetime().nullable().optional(),
  /** The approved edit of the call (arguments redacted). */
  edit: AttentionEditSchema.nullable().optional(),
});
export type AttentionView = z.infer<typeof AttentionSchema>;

/** Codes of the errors the policy commands answer with (other than validation). */
export const PolicyErrorCodes = {
  attentionNotFound: 'attention_not_found',
  /** The attention was already approved, rejected, expired or withdrawn; the message names which. */
  attentionAlreadyAnswered: 'attention_already_answered',
  /** The rules name approvers and the caller is not one of them, or did not say who they are (role, email). */
  approverNotAllowed: 'approver_not_allowed',
  /** Under a quorum, this approver's approval is already recorded: a second one does not count. */
  approvalAlreadyRecorded: 'approval_already_recorded',
  /** The edited arguments are not valid for the tool. */
  editInvalid: 'edit_invalid',
  /** The edited call is not covered by the run's grants (tool, verb, resource, credentials). */
  editNotGranted: 'edit_not_granted',
  /** This call cannot be edited (an MCP tool, a control tool, a call on a computer, or a quorum of more than one). */
  editNotSupported: 'edit_not_supported',
  /** computerKeyGrant: no computer of that name is registered in the workspace. */
  computerNotFound: 'computer_not_found',
  /** computerKeyGrant: the computer has no key to grant (a `local` computer). */
  computerWithoutKey: 'computer_without_key',
  /** computerKeyGrant: the registry did not answer, or answered a record that cannot be read; retryable. */
  computerUnavailable: 'computer_unavailable',
  /** computerKeyGrant for mcp_list: the computer's policy asks (or denies) before a command runs, and listing would start one unasked. */
  computerListingRefused: 'computer_listing_refused',
  /** routeCredentialGrant: the run's pinned definition has no such route, or the route names no credential. */
  routeCredentialUnavailable: 'route_credential_unavailable',
} as const;

const attentionRef = z.object({ workspaceId, attentionId: id });
export const MAX_EDITED_ARGUMENTS_BYTES = 64 * 1024;
export const EditedArguments = z
  .record(z.string(), z.json())
  .refine((value) => Buffer.byteLength(JSON.stringify(value), 'utf8') <= MAX_EDITED_ARGUMENTS_BYTES, { error: `at most ${MAX_EDITED_ARGUMENTS_BYTES} bytes as JSON` });

export const PolicyCommands = {
  /** Fail-closed: allow, deny or approval_required, each recorded as `policy.decided`. */
  authorize: defineCommand('policy.authorize', AuthorizeRequestSchema, AuthorizeResultSchema),
  approveAttention: defineCommand(
    'policy.attention.approve',
    attentionRef.extend({
      scope: AttentionScopeSchema,
      actor: ActorSchema,
      /** The approver's workspace role, checked against rules that name a role. */
      role: RoleSchema.optional(),
      /** The approver's email, checked (with the actor's id) against rules that list approvers. */
      email: z.string().min(3).max(254).optional(),
      /** Approve this call with these arguments instead (at most 64 KiB as JSON). */
      arguments: EditedArguments.optional(),
    }),
    AttentionSchema,
  ),
  rejectAttention: defineCommand(
    'policy.attention.reject',
    attentionRef.extend({ reason: z.string().min(1).max(1000), actor: ActorSchema, role: RoleSchema.optional(), email: z.string().min(3).max(254).optional() }),
    AttentionSchema,
  ),
  listAttention: defineCommand(
    'policy.attention.list',
    z.object({ workspaceId, state: AttentionStateSchema.nullable().default(null), limit: z.number().int().min(1).max(500).default(100) }),
    z.object({ items: z.array(AttentionSchema) }),
  ),
  getAttention: defineCommand('policy.attention.get', attentionRef, AttentionSchema),
  /**
   * A single-use grant for a registered computer's key, for the sandbox's probes and for killing
   * what a sandbox replica that died left running there (`reclaim`). Policy reads the
   * record from its owner, so only a key an operator registered as a computer's can be granted
   * this way; every grant is recorded as `policy.computer_key_granted`.
   */
  /**
   * A single-use grant for the credential a notification route of the run's pinned definition
   * names, for the notifications service to send one delivery: a caller cannot name another
   * credential. Recorded as `policy.route_credential_granted`.
   */
  routeCredentialGrant: defineCommand(
    'policy.notifications.credential_grant',
    z.strictObject({ workspaceId, runId: id, routeIndex: z.number().int().min(0).max(15), deliveryId: id }),
    z.object({ credential: z.string(), token: z.string() }),
  ),
  computerKeyGrant: defineCommand(
    'policy.computers.key_grant',
    z.strictObject({ workspaceId, computer: z.string().regex(/^[a-z][a-z0-9-]{0,62}$/), purpose: z.enum(['probe', 'reclaim', 'mcp_list']) }),
    z.object({ credential: z.string(), token: z.string() }),
  ),
  /**
   * An attention that asks nothing of policy: a run tells a person what it could not settle
   * itself (an effect whose outcome is unknown), with the evidence. Raising the same kind for
   * the same run and effect again answers the record already raised. `budget_request`: a run at
   * its own cost limit asks for more (`arguments.evidence`: requestedUsd, spentUsd, limitUsd,
   * reason); approving it makes the supervisor raise the run's limit (`budget.limits.raise_run`).
   */
  raiseAttention: defineCommand(
    'policy.attention.raise',
    z.object({
      workspaceId,
      runId: z.string().regex(/^[A-Za-z0-9_:@-]{1,200}$/),
      kind: z.enum(['uncertain_effect', 'run_quarantined', 'run_unrecordable', 'run_without_owner', 'wait_lost', 'credential_reconnect', 'budget_request']),
      tool: z.string().min(1).max(100),
      verb: z.string().max(50),
      resource: z.string().max(4096).nullable(),
      /** Redacted before it is stored. */
      arguments: z.json(),
      requester: ActorSchema.default({ kind: 'service', id: 'supervisor' }),
    }),
    AttentionSchema,
  ),
} as const;
