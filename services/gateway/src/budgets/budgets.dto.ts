import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { BudgetCommands, BudgetScopeKindSchema, BudgetScopeSchema } from '@packetagent/contracts';

export const BudgetsQuery = z.object({
  kind: BudgetScopeKindSchema.optional(),
  id: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(1_000).default(200),
});
export class BudgetsQueryDto extends createZodDto(BudgetsQuery) {}

export const ReviewBudgetBody = z.strictObject({ scope: BudgetScopeSchema, note: z.string().max(500).optional() });
export class ReviewBudgetDto extends createZodDto(ReviewBudgetBody) {}

export class BudgetUsageDto extends createZodDto(BudgetCommands.usage.response) {}
export class BudgetReviewDto extends createZodDto(BudgetCommands.review.response) {}
