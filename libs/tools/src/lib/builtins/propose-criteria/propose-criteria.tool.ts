import { z } from 'zod';
import type { BuiltinTool } from '../../internal/builtin';
import { toParameters } from '../../internal/schema';
import { controlOperation } from '../control';
import { CriteriaSchema } from '../criteria';

const ArgsSchema = z.strictObject({ criteria: CriteriaSchema });

export type ProposeCriteriaArgs = z.output<typeof ArgsSchema>;

export const proposeCriteriaTool: BuiltinTool<ProposeCriteriaArgs> = {
  descriptor: {
    tool: 'propose_criteria',
    description: 'Proposes the done-criteria the run will be held to, before the work starts.',
    parameters: toParameters(ArgsSchema),
    argsSchema: ArgsSchema,
    ...controlOperation<ProposeCriteriaArgs>(),
  },
};
