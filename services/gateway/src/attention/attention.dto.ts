import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { AttentionScopeSchema, AttentionStateSchema } from '@packetagent/contracts';

export const AttentionQuery = z.object({
  state: AttentionStateSchema.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export class AttentionQueryDto extends createZodDto(AttentionQuery) {}

export const ApproveAttentionBody = z.strictObject({ scope: AttentionScopeSchema });
export class ApproveAttentionDto extends createZodDto(ApproveAttentionBody) {}

export const RejectAttentionBody = z.strictObject({ reason: z.string().min(1).max(1000) });
export class RejectAttentionDto extends createZodDto(RejectAttentionBody) {}
