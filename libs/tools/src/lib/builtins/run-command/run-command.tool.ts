import { normaliseResource } from '@packetagent/contracts';
import { z } from 'zod';
import { failure, type BuiltinTool } from '../../internal/builtin';
import { toParameters } from '../../internal/schema';
import { normaliseWorkspacePath } from '../../workspace/workspace-path';

const ArgsSchema = z.strictObject({
  command: z
    .string()
    .min(1)
    .max(2000)
    .superRefine((command, ctx) => {
      const checked = normaliseResource('run_command', command);
      if (!checked.ok) ctx.addIssue({ code: 'custom', message: checked.message });
    })
    .describe('The program and its arguments, e.g. "npm test"; no shell: ; | & $ < > and backticks are refused.'),
  cwd: z
    .string()
    .max(1024)
    .superRefine((cwd, ctx) => {
      const checked = normaliseWorkspacePath(cwd, { allowRoot: true });
      if (!checked.ok) ctx.addIssue({ code: 'custom', message: checked.message });
    })
    .optional()
    .describe('Directory relative to the run workspace; the workspace itself when omitted.'),
  timeoutSeconds: z.number().int().min(1).max(3600).optional().describe('Wall time limit for the command.'),
});

export type RunCommandArgs = z.output<typeof ArgsSchema>;

export const runCommandTool: BuiltinTool<RunCommandArgs> = {
  descriptor: {
    tool: 'run_command',
    description: 'Runs a program in the run\'s sandbox, in the run workspace, and returns its exit code and output.',
    parameters: toParameters(ArgsSchema),
    argsSchema: ArgsSchema,
    verb: () => 'exec',
    resource(args) {
      const checked = normaliseResource('run_command', args.command);
      return checked.ok ? checked.value : args.command;
    },
    mutating: () => true,
    idempotentByKey: () => false,
    credentials: () => [],
    redact: (args) => ({ command: args.command, ...(args.cwd !== undefined ? { cwd: args.cwd } : {}), ...(args.timeoutSeconds !== undefined ? { timeoutSeconds: args.timeoutSeconds } : {}) }),
  },

  async execute() {
    return failure('sandbox_unavailable', 'sandbox service not available');
  },
};
