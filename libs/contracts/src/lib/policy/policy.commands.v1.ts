import { z } from 'zod';
import { defineCommand } from '../commands';
import { Identifiers } from '../envelope';
import { ActorSchema } from '../control-plane/intake.commands.v1';
import { AttentionScopeSchema, DecisionReasonSchema, DecisionSchema } from './policy.events.v1';

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
});
export type AttentionView = z.infer<typeof AttentionSchema>;

/** Codes of the errors the policy commands answer with (other than validation). */
export const PolicyErrorCodes = {
  attentionNotFound: 'attention_not_found',
  /** The attention was already approved, rejected, expired or withdrawn; the message names which. */
  attentionAlreadyAnswered: 'attention_already_answered',
  /** computerKeyGrant: no computer of that name is registered in the workspace. */
  computerNotFound: 'computer_not_found',
  /** computerKeyGrant: the computer has no key to grant (a `local` computer). */
  computerWithoutKey: 'computer_without_key',
  /** computerKeyGrant: the registry did not answer, or answered a record that cannot be read; retryable. */
  computerUnavailable: 'computer_unavailable',
  /** computerKeyGrant for mcp_list: the computer's policy asks (or denies) before a command runs, and listing would start one unasked. */
  computerListingRefused: 'computer_listing_refused',
} as const;

const attentionRef = z.object({ workspaceId, attentionId: id });

export const PolicyCommands = {
  /** Fail-closed: allow, deny or approval_required, each recorded as `policy.decided`. */
  authorize: defineCommand('policy.authorize', AuthorizeRequestSchema, AuthorizeResultSchema),
  approveAttention: defineCommand(
    'policy.attention.approve',
    attentionRef.extend({ scope: AttentionScopeSchema, actor: ActorSchema }),
    AttentionSchema,
  ),
  rejectAttention: defineCommand(
    'policy.attention.reject',
    attentionRef.extend({ reason: z.string().min(1).max(1000), actor: ActorSchema }),
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
  computerKeyGrant: defineCommand(
    'policy.computers.key_grant',
    z.strictObject({ workspaceId, computer: z.string().regex(/^[a-z][a-z0-9-]{0,62}$/), purpose: z.enum(['probe', 'reclaim', 'mcp_list']) }),
    z.object({ credential: z.string(), token: z.string() }),
  ),
  /**
   * An attention that asks nothing of policy: a run tells a person what it could not settle
   * itself (an effect whose outcome is unknown), with the evidence. Raising the same kind for
   * the same run and effect again answers the record already raised.
   */
  raiseAttention: defineCommand(
    'policy.attention.raise',
    z.object({
      workspaceId,
      runId: z.string().regex(/^[A-Za-z0-9_:@-]{1,200}$/),
      kind: z.enum(['uncertain_effect', 'run_quarantined', 'run_unrecordable', 'run_without_owner', 'wait_lost', 'credential_reconnect']),
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
