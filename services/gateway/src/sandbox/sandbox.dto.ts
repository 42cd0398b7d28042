import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import {
  ExecIdSchema,
  ExecLimitsSchema,
  ExecRecordSchema,
  ExecRequestSchema,
  ExecResultSchema,
  MAX_EXEC_ENV_ENTRIES,
  SandboxCommands,
  SandboxStatusSchema,
} from '@packetagent/contracts';

/** Most bytes of environment values one request may carry: the request to the sandbox must fit one NATS message. */
export const MAX_EXEC_ENV_BYTES = 256 * 1024;

const runId = ExecRequestSchema.shape.runId;

export const ExecBody = z
  .strictObject({
    command: z
      .string()
      .min(1)
      .max(2000)
      .optional()
      .describe('The program and its arguments split on spaces, e.g. "node --version"; no shell and no quoting: ; | & $ < > and backticks are refused. Give this or argv.'),
    argv: ExecRequestSchema.shape.argv.optional().describe('The program (a plain name on the sandbox PATH) and its arguments, one string each. Give this or command.'),
    cwd: z.string().max(1024).optional().describe('Directory relative to the workspace; the workspace itself when absent.'),
    env: z
      .record(z.string().max(128), z.string().max(32 * 1024))
      .optional()
      .refine((env) => env === undefined || Object.keys(env).length <= MAX_EXEC_ENV_ENTRIES, `at most ${MAX_EXEC_ENV_ENTRIES} entries`)
      .refine(
        (env) => env === undefined || Object.entries(env).reduce((total, [name, value]) => total + Buffer.byteLength(name) + Buffer.byteLength(value), 0) <= MAX_EXEC_ENV_BYTES,
        `at most ${MAX_EXEC_ENV_BYTES} bytes of names and values`,
      )
      .describe("Environment names from the sandbox's allowlist (GET .../sandbox/status); names that look like secrets are refused."),
    limits: ExecLimitsSchema.partial().optional().describe("Each at most the sandbox's maximum; the sandbox's default applies to any left out."),
    runId: runId.describe("Run the command in this run's workspace (a run of this workspace); a scratch workspace of its own when absent."),
    wait: z.boolean().default(false).describe('Answer 200 with the result when the command has ended, rather than 202 once it has started.'),
  })
  .refine((body) => (body.command === undefined) !== (body.argv === undefined), { path: ['command'], message: 'give either command or argv, not both' });
export class SandboxExecBodyDto extends createZodDto(ExecBody) {}
export type ExecBodyInput = z.output<typeof ExecBody>;

export const ExecLinks = z.object({
  self: z.string(),
  stream: z.string(),
  output: z.string().describe('add ?stream=stdout or ?stream=stderr'),
  cancel: z.string(),
});
export const ExecAccepted = z.object({
  execId: ExecIdSchema,
  state: z.literal('running'),
  links: ExecLinks,
});
export class ExecAcceptedDto extends createZodDto(ExecAccepted) {}

export class ExecResultDto extends createZodDto(ExecResultSchema) {}
export class ExecRecordDto extends createZodDto(ExecRecordSchema) {}
export class ExecListDto extends createZodDto(SandboxCommands.list.response) {}
export class ExecCancelResultDto extends createZodDto(SandboxCommands.cancel.response) {}
export class SandboxStatusDto extends createZodDto(SandboxStatusSchema) {}

export const ExecListQuery = z.object({
  runId: runId.describe("only this run's execs (a run_command call's exec id is `<runId>:<callId>`)"),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export class ExecListQueryDto extends createZodDto(ExecListQuery) {}

export const EXEC_STREAMS = ['stdout', 'stderr'] as const;
export const ExecOutputQuery = z.object({ stream: z.enum(EXEC_STREAMS).default('stdout') });
export class ExecOutputQueryDto extends createZodDto(ExecOutputQuery) {}
