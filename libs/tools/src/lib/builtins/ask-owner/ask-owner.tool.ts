import { z } from 'zod';
import type { BuiltinTool } from '../../internal/builtin';
import { toParameters } from '../../internal/schema';
import { controlOperation } from '../control';

const ArgsSchema = z.strictObject({
  question: z.string().min(1).max(4000).describe('One clear question; the run waits for the answer.'),
});

export type AskOwnerArgs = z.output<typeof ArgsSchema>;

export const askOwnerTool: BuiltinTool<AskOwnerArgs> = {
  descriptor: {
    tool: 'ask_owner',
    description: 'Asks the worker\'s owner a question and waits for the answer. Use it when the task cannot go on without a decision only a person can make.',
    parameters: toParameters(ArgsSchema),
    argsSchema: ArgsSchema,
    ...controlOperation<AskOwnerArgs>(),
  },
};
