import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { AttentionScopeSchema, AttentionStateSchema, EditedArguments, PolicyCommands, ROLES } from '@packetagent/contracts';

export const AttentionQuery = z.object({
  state: AttentionStateSchema.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export class AttentionQueryDto extends createZodDto(AttentionQuery) {}

export const ApproveAttentionBody = z.strictObject({
  scope: AttentionScopeSchema,
  /** Approve the call with these arguments instead: checked against the tool's schema and the run's grants. */
  arguments: EditedArguments.optional(),
});
export class ApproveAttentionDto extends createZodDto(ApproveAttentionBody) {}

export const RejectAttentionBody = z.strictObject({ reason: z.string().min(1).max(1000) });
export class RejectAttentionDto extends createZodDto(RejectAttentionBody) {}

/**
 * The grant's approval rules as an attention carries them (ApprovalRules). The contract reads them
 * through a transform, whose output zod cannot describe, so their shape is spelled out here.
 */
const ApprovalRulesView = z.object({
  mode: z.enum(['first_use', 'always']),
  deadline: z.string().optional(),
  remindAfter: z.string().optional(),
  escalate: z.object({ after: z.string(), to: z.string() }).optional(),
  quorum: z.number().int().optional(),
  approvers: z.union([z.enum(ROLES), z.array(z.string())]).optional().describe('a workspace role approvers hold at least, or the user ids and emails that may approve'),
});
const AttentionView = PolicyCommands.getAttention.response.extend({ rules: ApprovalRulesView.nullable().optional() });

export class AttentionListDto extends createZodDto(PolicyCommands.listAttention.response.extend({ items: z.array(AttentionView) })) {}
/** An attention as read, and as an approval or a rejection leaves it. */
export class AttentionDto extends createZodDto(AttentionView) {}
