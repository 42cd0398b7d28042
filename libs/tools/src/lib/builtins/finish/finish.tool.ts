import { z } from 'zod';
import type { BuiltinTool } from '../../internal/builtin';
import { jsonValue, toParameters } from '../../internal/schema';
import { controlOperation } from '../control';

const ArgsSchema = z.strictObject({
  summary: z.string().min(1).max(8000).describe('What was done and how each done-criterion was met.'),
  output: jsonValue('The run\'s result, when the worker defines one (checked against its output schema).', 256 * 1024).optional(),
  criteria: z
    .array(
      z.strictObject({
        criterion: z.string().min(1).max(1000).describe('A done-criterion, word for word.'),
        met: z.boolean(),
        evidence: z.string().max(2000).optional().describe('What shows it is met.'),
      }),
    )
    .max(50)
    .optional()
    .describe('Each done-criterion of the run and whether it is met; the run finishes only when all are.'),
});

export type FinishArgs = z.output<typeof ArgsSchema>;

export const finishTool: BuiltinTool<FinishArgs> = {
  descriptor: {
    tool: 'finish',
    description: 'Ends the run: call it once every done-criterion is met, with a summary and, if the worker defines one, the output.',
    parameters: toParameters(ArgsSchema),
    argsSchema: ArgsSchema,
    ...controlOperation<FinishArgs>(),
  },
};
