import { z } from 'zod';
import type { BuiltinTool } from '../../internal/builtin';
import { toParameters } from '../../internal/schema';
import { controlOperation } from '../control';
import { CriteriaSchema } from '../criteria';

const ArgsSchema = z.strictObject({
  criteria: CriteriaSchema,
  reason: z.string().min(1).max(2000).describe('Why the criteria change: what was learned.'),
});

export type UpdateCriteriaArgs = z.output<typeof ArgsSchema>;

export const updateCriteriaTool: BuiltinTool<UpdateCriteriaArgs> = {
  descriptor: {
    tool: 'update_criteria',
    description: 'Replaces the done-criteria, with the reason; the change is recorded and may need approval.',
    parameters: toParameters(ArgsSchema),
    argsSchema: ArgsSchema,
    ...controlOperation<UpdateCriteriaArgs>(),
  },
};
